/// Names in SQL statements built in code.
package enum SQLIdentifier {
    /// `name` as a quoted SQL identifier, `"name"` with its own quotes
    /// doubled: any table or column name, keywords and spaces included.
    package static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
