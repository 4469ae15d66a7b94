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
    var alone = Samples(), directory = Samples(), bucketRate = Samples()
    var requestsDuringRate: [String: Int] = [:]
    for round in 0..<rounds {
        let pool = try DatabasePool(path: path, key: key)
        alone.add(try commitRate(pool, for: 3))
        try pool.close()
        var options = Database.Options()
        options.continuousBackup = .init(storage: try DirectoryBackupStorage(path: dir.appendingPathComponent("directory-\(round)").path))
        let toDirectory = try DatabasePool(path: path, key: key, options: options)
        directory.add(try commitRate(toDirectory, for: 3))
        try toDirectory.close()
        let storage = try freshStorage()
        options.continuousBackup = .init(storage: storage)
        let toBucket = try DatabasePool(path: path, key: key, options: options)
        bucketRate.add(try commitRate(toBucket, for: 3))
        try toBucket.close()
        if round == 0 { requestsDuringRate = storage.requestCounts }
    }
    print("  commits/s       alone \(String(format: "%7.0f", alone.median))   directory backup \(String(format: "%7.0f", directory.median)) (\(ratio(directory.median, alone.median)))   S3 backup \(String(format: "%7.0f", bucketRate.median)) (\(ratio(bucketRate.median, alone.median)))")
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
