/// How a record's coding keys name its table's columns, both ways: when a
/// record is written, and when a row is decoded.
///
/// A key that `CodingKeys` spells out is transformed too: with
/// `.snakeCase`, `case firstName` and `case firstName = "first_name"` both
/// name the column `first_name`. Column names are compared as SQLite
/// compares them, ignoring ASCII case.
public enum ColumnNaming: Sendable {
    /// The column is named as the key is: `firstName` is `firstName`.
    case asIs
    /// Words joined by underscores, in lower case: `firstName` is
    /// `first_name`, `userID` is `user_id`, `urlString` and `URLString`
    /// are `url_string`, `address2` is `address2`. Underscores already in
    /// the key are kept.
    case snakeCase

    /// The column that `key` names.
    public func column(for key: String) -> String {
        switch self {
        case .asIs: return key
        case .snakeCase: return Self.snakeCase(key)
        }
    }

    /// `key` in snake case: a word starts at an upper-case letter after a
    /// lower-case letter or digit, and at the last capital of a run of
    /// capitals followed by a lower-case letter (`URLString`: `url`, `string`).
    static func snakeCase(_ key: String) -> String {
        let characters = Array(key)
        var result = ""
        result.reserveCapacity(characters.count + 4)
        for (i, character) in characters.enumerated() {
            if character.isUppercase, i > 0, result.last != "_" {
                let previous = characters[i - 1]
                let next = i + 1 < characters.count ? characters[i + 1] : nil
                let startsWord = previous.isLowercase || previous.isNumber
                    || (previous.isUppercase && next?.isLowercase == true)
                if startsWord { result.append("_") }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }
}
