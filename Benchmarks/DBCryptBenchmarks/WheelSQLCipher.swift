import Foundation

/// SQLCipher 4.19 (on SQLite 3.53, OpenSSL inside) as PyPI's `sqlcipher3`
/// wheel ships it, loaded with `dlopen` into a child process: its extension
/// module exports the whole `sqlite3_*` API, `sqlite3_key` included. Deep
/// binding keeps its calls inside itself, away from the Debian SQLCipher
/// this executable links; libpython is loaded first for the module's own
/// Python symbols. The W1/W2 loops here are `rawInsert` and `rawScan`, call
/// for call, through these function pointers.
struct WheelSQLCipher {
    private typealias Statement = OpaquePointer
    let open: @convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<OpaquePointer?>, Int32, UnsafePointer<CChar>?) -> Int32
    let key: @convention(c) (OpaquePointer, UnsafeRawPointer, Int32) -> Int32
    let exec: @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
    let close: @convention(c) (OpaquePointer) -> Int32
    let errmsg: @convention(c) (OpaquePointer) -> UnsafePointer<CChar>
    let prepare: @convention(c) (OpaquePointer, UnsafePointer<CChar>, Int32, UnsafeMutablePointer<OpaquePointer?>, UnsafeRawPointer?) -> Int32
    let finalize: @convention(c) (OpaquePointer?) -> Int32
    let step: @convention(c) (OpaquePointer) -> Int32
    let reset: @convention(c) (OpaquePointer) -> Int32
    let bindInt64: @convention(c) (OpaquePointer, Int32, Int64) -> Int32
    let bindDouble: @convention(c) (OpaquePointer, Int32, Double) -> Int32
    let bindText: @convention(c) (OpaquePointer, Int32, UnsafePointer<CChar>, Int32, UnsafeRawPointer?) -> Int32
    let columnInt64: @convention(c) (OpaquePointer, Int32) -> Int64
    let columnDouble: @convention(c) (OpaquePointer, Int32) -> Double
    let columnText: @convention(c) (OpaquePointer, Int32) -> UnsafePointer<UInt8>

    /// The wheel's extension module under `.build/interop-venv` (made by
    /// `scripts/interop-venv`), or nil when there is none.
    static func modulePath() -> String? {
        let lib = URL(fileURLWithPath: ".build/interop-venv/lib")
        let enumerator = FileManager.default.enumerator(at: lib, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.deletingLastPathComponent().lastPathComponent == "sqlcipher3", url.lastPathComponent.hasPrefix("_sqlite3"),
               url.pathExtension == "so" { return url.path }
        }
        return nil
    }

    /// Loads the module at `path` (in `.../lib/python3.N/site-packages/sqlcipher3/`).
    init(modulePath path: String) {
        guard let version = path.split(separator: "/").first(where: { $0.hasPrefix("python3.") }),
              dlopen("lib\(version).so.1.0", RTLD_NOW | RTLD_GLOBAL) != nil else {
            fatalError("cannot load the libpython of \(path): \(String(cString: dlerror()))")
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | 0x8 /* RTLD_DEEPBIND */) else {
            fatalError("cannot load \(path): \(String(cString: dlerror()))")
        }
        func symbol<T>(_ name: String) -> T {
            guard let address = dlsym(handle, name) else { fatalError("\(path) has no \(name)") }
            return unsafeBitCast(address, to: T.self)
        }
        open = symbol("sqlite3_open_v2")
        key = symbol("sqlite3_key")
        exec = symbol("sqlite3_exec")
        close = symbol("sqlite3_close_v2")
        errmsg = symbol("sqlite3_errmsg")
        prepare = symbol("sqlite3_prepare_v2")
        finalize = symbol("sqlite3_finalize")
        step = symbol("sqlite3_step")
        reset = symbol("sqlite3_reset")
        bindInt64 = symbol("sqlite3_bind_int64")
        bindDouble = symbol("sqlite3_bind_double")
        bindText = symbol("sqlite3_bind_text")
        columnInt64 = symbol("sqlite3_column_int64")
        columnDouble = symbol("sqlite3_column_double")
        columnText = symbol("sqlite3_column_text")
    }

    /// Opens `path`, keyed with `key` (SQLCipher 4's defaults) when given, and reads the schema.
    func connect(_ path: String, key text: String?) -> OpaquePointer {
        var db: OpaquePointer?
        _ = open(path, &db, 0x2 | 0x4 /* READWRITE | CREATE, as the provider benchmark opens */, nil)
        guard let db else { fatalError("cannot open \(path)") }
        if let text { _ = key(db, text, Int32(text.utf8.count)) }
        check(db, exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil))
        return db
    }

    func check(_ db: OpaquePointer, _ code: Int32) {
        guard code == 0 else { fatalError(String(cString: errmsg(db))) }
    }

    /// W1, as `rawInsert`.
    func insert(_ db: OpaquePointer, _ rows: BenchmarkRows) {
        let transient = UnsafeRawPointer(bitPattern: -1)   // SQLITE_TRANSIENT
        var statement: OpaquePointer?
        check(db, prepare(db, insertSQL, -1, &statement, nil))
        defer { _ = finalize(statement) }
        guard let statement else { fatalError("no statement") }
        check(db, exec(db, "BEGIN", nil, nil, nil))
        for i in 0..<rows.count {
            let (a, b, c) = rows.integers[i]
            let (d, e) = rows.reals[i]
            let (f, g, h) = rows.texts[i]
            _ = bindInt64(statement, 1, a)
            _ = bindInt64(statement, 2, b)
            _ = bindInt64(statement, 3, c)
            _ = bindDouble(statement, 4, d)
            _ = bindDouble(statement, 5, e)
            _ = bindText(statement, 6, f, -1, transient)
            _ = bindText(statement, 7, g, -1, transient)
            _ = bindText(statement, 8, h, -1, transient)
            guard step(statement) == 101 /* SQLITE_DONE */ else { fatalError(String(cString: errmsg(db))) }
            _ = reset(statement)
        }
        check(db, exec(db, "COMMIT", nil, nil, nil))
    }

    /// W2, as `rawScan`.
    func scan(_ db: OpaquePointer) -> Int {
        var statement: OpaquePointer?
        check(db, prepare(db, "SELECT a, b, c, d, e, f, g, h FROM item", -1, &statement, nil))
        defer { _ = finalize(statement) }
        guard let statement else { fatalError("no statement") }
        var checksum = 0
        while step(statement) == 100 /* SQLITE_ROW */ {
            let a = columnInt64(statement, 0), b = columnInt64(statement, 1)
            let c = columnInt64(statement, 2)
            let d = columnDouble(statement, 3), e = columnDouble(statement, 4)
            let f = String(cString: columnText(statement, 5))
            let g = String(cString: columnText(statement, 6))
            let h = String(cString: columnText(statement, 7))
            checksum &+= Int(a &+ b &+ c) &+ Int(d + e) &+ f.utf8.count &+ g.utf8.count &+ h.utf8.count
        }
        return checksum
    }
}
