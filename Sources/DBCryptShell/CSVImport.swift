import DBCrypt
import Foundation

extension Shell {
    /// `.import [--skip N] FILE TABLE`: the rows of a CSV file, past the
    /// first `skip`, into TABLE, in one savepoint. A table that does not
    /// exist is made with the first row as its column names (every column
    /// TEXT); into one that exists, every row is data. A row with fewer
    /// fields than the table has columns is filled with NULL, one with more
    /// loses the extra fields: each is one line to the user, and the import
    /// goes on.
    func importCSV(_ file: String, into table: String, skipping skip: Int = 0) throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ShellError("Cannot read \(file): \(FileManager.default.fileExists(atPath: file) ? "permission denied or not a file" : "no such file").")
        }
        // A byte order mark is not part of the first column's name.
        var records = CSVRecords(Array(data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data))
        var skipped = 0
        while skipped < skip, records.next() != nil { skipped += 1 }
        let quoted = SQLIdentifier.quoted(table)
        try queue.inDatabase { db in
            Interrupts.target(try db.interrupter, seen: interruptsSeen)
            defer { Interrupts.target(nil) }
            try db.execute("SAVEPOINT dbcrypt_import")
            do {
                var columns = try Shell.columnNames(of: quoted, in: db).count
                if columns == 0 {
                    guard let names = records.next() else {
                        throw ShellError("\(file) has no row\(skip > 0 ? " past the \(skipped) skipped" : "") to name the columns of \(table).")
                    }
                    let definitions = names.fields.map { SQLIdentifier.quoted(String(decoding: $0, as: UTF8.self)) + " TEXT" }
                    try db.execute("CREATE TABLE \(quoted)(\(definitions.joined(separator: ", ")))")
                    columns = names.fields.count
                }
                // Each field as text, the columns' affinity applied. In a UTF-8 database its bytes go in as they are, as sqlite3
                // stores them (a Latin-1 file's too); a UTF-16 database reads a blob cast to text as UTF-16, so there it is decoded.
                let asBytes = try db.fetchScalar(String.self, "PRAGMA encoding") == "UTF-8"
                let placeholder = asBytes ? "CAST(? AS TEXT)" : "?"
                let insert = try db.makeStatement("INSERT INTO \(quoted) VALUES (\(Array(repeating: placeholder, count: columns).joined(separator: ", ")))")
                while let record = records.next() {
                    if record.fields.count != columns {
                        host.note("\(file):\(record.line): expected \(columns) columns but found \(record.fields.count): "
                                  + (record.fields.count < columns ? "filling the rest with NULL." : "extras ignored."))
                    }
                    let values: [(any DatabaseValueConvertible)?] = (0..<columns).map { index in
                        guard index < record.fields.count else { return nil }
                        return asBytes ? Data(record.fields[index]) : String(decoding: record.fields[index], as: UTF8.self)
                    }
                    try insert.execute(StatementArguments(values))
                }
                try db.execute("RELEASE dbcrypt_import")
            } catch {
                try? db.execute("ROLLBACK TO dbcrypt_import")
                try? db.execute("RELEASE dbcrypt_import")
                throw error
            }
        }
    }
}

/// The records of RFC 4180 CSV: fields separated by commas, records by LF
/// or CRLF, a quoted field holding commas, line breaks and doubled quotes.
struct CSVRecords {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The next record and the line it starts on, or nil at the end.
    mutating func next() -> (fields: [[UInt8]], line: Int)? {
        guard index < bytes.count else { return nil }
        let startLine = line
        var fields: [[UInt8]] = []
        var field: [UInt8] = []
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == 0x22 {
                    if index < bytes.count, bytes[index] == 0x22 { field.append(0x22); index += 1 } else { quoted = false }
                } else {
                    if byte == 10 { line += 1 }
                    field.append(byte)
                }
            } else if byte == 0x22 {
                quoted = true
            } else if byte == 0x2C {
                fields.append(field)
                field = []
            } else if byte == 10 || byte == 13 {
                if byte == 13, index < bytes.count, bytes[index] == 10 { index += 1 }
                line += 1
                break
            } else {
                field.append(byte)
            }
        }
        fields.append(field)
        return (fields, startLine)
    }
}
