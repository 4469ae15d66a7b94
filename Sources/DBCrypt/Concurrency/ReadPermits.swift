import Foundation

/// One permit for each read of a pool that may run at once. A read holds
/// one while it runs; work that must see no read of the pool takes them
/// all, and new reads wait behind it from the moment it asks, so reads
/// that keep coming cannot starve it (a semaphore would let a read that
/// just ended take its permit back first, again and again).
final class ReadPermits: @unchecked Sendable {
    // @unchecked: `available`, `waitingForAll` and `waitingReads` are used under `condition`'s lock.

    /// How many reads may run at once.
    let count: Int
    private let condition = NSCondition()
    private var available: Int
    /// Takers of every permit waiting for reads to end.
    private var waitingForAll = 0
    /// Reads waiting for a permit.
    private var waitingReads = 0

    init(count: Int) {
        self.count = count
        available = count
    }

    /// Waits for a permit, behind any taker of them all, and takes it.
    func take() {
        condition.lock()
        defer { condition.unlock() }
        waitingReads += 1
        while available == 0 || waitingForAll > 0 { condition.wait() }
        waitingReads -= 1
        available -= 1
    }

    /// Gives back a permit taken with ``take()``.
    func give() {
        condition.lock()
        defer { condition.unlock() }
        available += 1
        condition.broadcast()
    }

    /// Waits until no read runs and takes every permit.
    func takeAll() {
        _ = takeAll(by: nil)
    }

    /// Takes every permit, waiting until `deadline` at most (nil: for as
    /// long as it takes) for the reads that run to end; new reads wait
    /// meanwhile. Returns false, holding none, when one did not end in time.
    func takeAll(by deadline: Date?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        waitingForAll += 1
        defer {
            waitingForAll -= 1
            condition.broadcast()
        }
        while available < count {
            // (Foundation's wait(until:) traps on a date as far as distantFuture.)
            guard let deadline else {
                condition.wait()
                continue
            }
            guard condition.wait(until: deadline) || available == count else { return false }
        }
        available = 0
        return true
    }

    /// Who waits now: takers of every permit, and reads. (What the tests
    /// observe instead of sleeping until a thread has begun to wait.)
    var waiting: (takersOfAll: Int, reads: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (waitingForAll, waitingReads)
    }

    /// Gives back every permit taken with ``takeAll()`` or ``takeAll(by:)``.
    func giveAll() {
        condition.lock()
        defer { condition.unlock() }
        available = count
        condition.broadcast()
    }
}
