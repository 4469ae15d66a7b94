import Foundation

/// Timings of one workload over several rounds.
struct Samples {
    var values: [Double] = []

    mutating func add(_ value: Double) { values.append(value) }

    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var min: Double { values.min() ?? .nan }
    var max: Double { values.max() ?? .nan }
}

/// Seconds taken by `body`, from a monotonic clock.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// CPU seconds this thread spent in `body` (user and system): steadier than
/// wall-clock time on a shared machine, and blind to waiting for the disk.
func cpuSeconds(_ body: () throws -> Void) rethrows -> Double {
    func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    let start = now()
    try body()
    return now() - start
}

/// `12.34 ms` style.
func milliseconds(_ value: Double) -> String { String(format: "%8.1f ms", value * 1000) }

/// `0.87x` style.
func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2fx", a / b) }

/// glibc's `malloc_trim(0)` (`<malloc.h>` is not in Swift's Glibc module):
/// consolidates the allocator's free lists, so that a measured loop does not
/// pay for what the work before it freed.
func trimAllocator() {
    typealias Trim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
}
