import DBCrypt
import DBCryptS3
import Foundation

/// W12: continuous backup to S3-compatible storage, against the local
/// radosgw of scripts/s3-server (its settings in the environment, as
/// `scripts/s3-server env` prints them). A writer's commit rate with no
/// backup, with a backup to a directory and with one to the bucket; the
/// requests a backup sends per minute while an app commits 100 times a
/// second; and a restore of a 256 MiB database from the bucket against
/// copying the same objects down with boto3 (`python` names an interpreter
/// that has it).
func runS3BackupBenchmark(rounds: Int, megabytes: Int, python: String) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let hex = String(repeating: "0123456789abcdef", count: 4)
    let key = try DatabaseKey(sqlcipherRawKey: "x'\(hex)'")
    let bucket = ProcessInfo.processInfo.environment["DBCRYPT_S3_BUCKET"] ?? "dbcrypt-test"
    func freshStorage() throws -> S3BackupStorage {
        try S3BackupStorage.fromEnvironment("s3://\(bucket)/w12-\(UUID().uuidString.prefix(8).lowercased())")
    }
    print("W12 continuous backup to S3 (Ceph radosgw on loopback), SQLCipher 4, raw key, \(rounds) rounds (wall clock)")

    // Commit rate: alone, shipping to a directory, shipping to the bucket (every second, as by default).
    let path = dir.appendingPathComponent("app.db").path
    let setup = try DatabasePool(path: path, key: key)
    try setup.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, a INTEGER, f TEXT)") }
    try setup.close()
    var alone = MeasuredWindows(), directory = MeasuredWindows(), bucketRate = MeasuredWindows()
    var requestsDuringRate: [String: Int] = [:]
    for round in 0..<rounds {
        let pool = try DatabasePool(path: path, key: key)
        try alone.measure { try commitCount(pool, for: 3) }
        try pool.close()
        var options = Database.Options()
        options.continuousBackup = .init(storage: try DirectoryBackupStorage(path: dir.appendingPathComponent("directory-\(round)").path))
        let toDirectory = try DatabasePool(path: path, key: key, options: options)
        try directory.measure { try commitCount(toDirectory, for: 3) }
        try toDirectory.close()
        let storage = try freshStorage()
        options.continuousBackup = .init(storage: storage)
        let toBucket = try DatabasePool(path: path, key: key, options: options)
        try bucketRate.measure { try commitCount(toBucket, for: 3) }
        try toBucket.close()
        if round == 0 { requestsDuringRate = storage.requestCounts }
    }
    // Each round's windows run back to back: a ratio is taken within a round, where the disk's
    // fsync latency (which bounds a commit) is most alike, and its median and spread printed.
    func relative(_ windows: MeasuredWindows) -> String {
        let ratios = zip(windows.rate.values, alone.rate.values).map { $0 / $1 }
        var samples = Samples()
        ratios.forEach { samples.add($0) }
        return String(format: "%.2fx, rounds %.2f-%.2fx", samples.median, samples.min, samples.max)
    }
    print("  commits/s       alone \(String(format: "%7.0f", alone.rate.median))   directory backup \(String(format: "%7.0f", directory.rate.median)) (\(relative(directory)))   S3 backup \(String(format: "%7.0f", bucketRate.rate.median)) (\(relative(bucketRate)))")
    print("  this process's CPU ms per 1,000 commits   alone \(String(format: "%.0f", alone.ownCPU.median))   directory \(String(format: "%.0f", directory.ownCPU.median))   S3 \(String(format: "%.0f", bucketRate.ownCPU.median))")
    print("  Ceph's daemons' CPU (cores busy) during the windows   alone \(String(format: "%.2f", alone.cephCores.median))   directory \(String(format: "%.2f", directory.cephCores.median))   S3 \(String(format: "%.2f", bucketRate.cephCores.median)) of \(ProcessInfo.processInfo.activeProcessorCount)")
    print("  (requests of one 3 s S3 window at full speed: \(describe(requestsDuringRate)))")

    // Requests per minute at 100 commits a second, paced, for 30 s.
    let paced = dir.appendingPathComponent("paced.db").path
    let storage = try freshStorage()
    var options = Database.Options()
    options.continuousBackup = .init(storage: storage)
    let pool = try DatabasePool(path: paced, key: key, options: options)
    try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, a INTEGER, f TEXT)") }
    let before = storage.requestCounts
    let window = 30.0
    let start = DispatchTime.now().uptimeNanoseconds
    var commits = 0
    while true {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if elapsed >= window { break }
        if Double(commits) < elapsed * 100 {
            try pool.write { db in try db.execute("INSERT INTO item(a, f) VALUES (?, 'a row written at 100 commits a second')", [commits]) }
            commits += 1
        } else {
            usleep(1_000)
        }
    }
    let during = storage.requestCounts.merging(before) { $0 - $1 }
    try pool.close()
    let perMinute = during.mapValues { Int((Double($0) * 60 / window).rounded()) }
    print("  at 100 commits/s (\(commits) commits in \(Int(window)) s): per minute \(describe(perMinute))")

    // Restore of a large database from the bucket, against boto3 copying the same objects.
    let large = dir.appendingPathComponent("large.db").path
    let filling = try DatabasePool(path: large, key: key)
    try filling.write { db in
        try db.execute("CREATE TABLE big(id INTEGER PRIMARY KEY, blob BLOB)")
        for _ in 0..<(megabytes * 4) { try db.execute("INSERT INTO big(blob) VALUES (randomblob(262144))") }
    }
    try filling.close()
    let source = try freshStorage()
    var manual = ContinuousBackup.Options()
    manual.interval = .seconds(3600)
    let backup = try ContinuousBackup(path: large, key: key, storage: source, options: manual)
    try backup.stop()
    let objects = try source.list().count
    var restores = Samples(), copies = Samples()
    for round in 0..<rounds {
        let out = dir.appendingPathComponent("restored-\(round).db").path
        restores.add(try seconds { _ = try ContinuousBackup.restore(from: source, key: key, to: out) })
        try FileManager.default.removeItem(atPath: out)
        copies.add(try boto3Copy(source, into: dir.appendingPathComponent("boto3-\(round)").path, python: python))
    }
    print("  restore \(SiblingSize.megabytes(large)) MB (\(objects) objects)   boto3 download \(milliseconds(copies.median))   restore \(milliseconds(restores.median))   ratio \(ratio(restores.median, copies.median))")
}

/// `PUT 12, LIST 0, ...`, in a fixed order.
private func describe(_ counts: [String: Int]) -> String {
    ["PUT", "GET", "LIST", "POST", "DELETE"].map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
}

/// Seconds boto3 takes to download every object of `storage` into
/// `directory`, timed inside Python (its start-up left out).
private func boto3Copy(_ storage: S3BackupStorage, into directory: String, python: String) throws -> Double {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let script = """
        import os, sys, time, boto3
        s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=os.environ.get("AWS_REGION", "us-east-1"))
        bucket, prefix, target = sys.argv[1], sys.argv[2], sys.argv[3]
        start = time.monotonic()
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                name = item["Key"][len(prefix):]
                if "/" in name or name.startswith("."):
                    continue
                s3.download_file(bucket, item["Key"], os.path.join(target, name))
        print(time.monotonic() - start)
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = ["-c", script, storage.s3.bucket, storage.s3.prefix + "/", directory]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
    guard process.terminationStatus == 0, let seconds = Double(printed.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "boto3's copy failed (\(python) needs boto3)"])
    }
    return seconds
}

/// Commit-rate windows with what each cost in CPU: this process's per
/// 1,000 commits, and the cores Ceph's daemons (the gateway, the OSD, the
/// monitor: work a remote service does elsewhere) kept busy meanwhile.
private struct MeasuredWindows {
    var rate = Samples(), ownCPU = Samples(), cephCores = Samples()

    mutating func measure(_ window: () throws -> (commits: Int, seconds: Double)) rethrows {
        let ownBefore = processCPUSeconds(), cephBefore = cephCPUSeconds()
        let (commits, seconds) = try window()
        rate.add(Double(commits) / seconds)
        ownCPU.add((processCPUSeconds() - ownBefore) * 1e6 / Double(commits))
        cephCores.add((cephCPUSeconds() - cephBefore) / seconds)
    }
}

/// The commits a pool's writer makes in `window` seconds, and the seconds it took.
private func commitCount(_ pool: DatabasePool, for window: Double) throws -> (commits: Int, seconds: Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    var commits = 0
    while Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 < window {
        try pool.write { db in try db.execute("INSERT INTO item(a, f) VALUES (?, 'a row written during the window')", [commits]) }
        commits += 1
    }
    return (commits, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// User and system CPU seconds of this process, every thread.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// User and system CPU seconds of every running ceph-mon, ceph-osd and
/// radosgw, from /proc (fields 14 and 15 of `stat`, in clock ticks).
private func cephCPUSeconds() -> Double {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
    var total = 0.0
    for pid in pids {
        guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
              ["ceph-mon", "ceph-osd", "radosgw"].contains(comm.trimmingCharacters(in: .whitespacesAndNewlines)),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        // After the command's closing parenthesis: field 3 onwards.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        total += (user + system) / ticks
    }
    return total
}
