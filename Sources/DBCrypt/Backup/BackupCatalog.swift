import Foundation

/// The records at a destination, as their names list them (no object is
/// fetched): in order, with the snapshots they make up. Names are not
/// trusted for a restore, which authenticates every record it uses; they
/// serve pruning and finding the last record.
struct BackupCatalog {
    struct Entry {
        let name: String
        let number: UInt64
        let kind: BackupRecord.Kind
        let time: UInt64
        let isLastPart: Bool
    }

    /// A snapshot: consecutive parts shipped at one time.
    struct Snapshot {
        let firstNumber: UInt64
        let lastNumber: UInt64
        let time: UInt64
        /// Whether its last part is there.
        let isComplete: Bool
    }

    /// Every record's entry, by number. Of two objects with one number
    /// (a write that failed after the object was stored, then written again
    /// with the next round's content), the later one: the backup went on from it.
    let entries: [Entry]
    /// The other objects of an entry's number, oldest first: a failed
    /// write's, to delete; or a record of another backup copied in, which a
    /// restore tells apart by its identity.
    let superseded: [Entry]
    /// The snapshots, oldest first.
    let snapshots: [Snapshot]

    /// Lists `storage`.
    ///
    /// - throws: the storage's errors.
    init(_ storage: any BackupStorage) throws {
        let all = try storage.list().compactMap { name in
            BackupRecord.parse(name: name).map { Entry(name: name, number: $0.number, kind: $0.kind, time: $0.time, isLastPart: $0.isLastPart) }
        }.sorted { ($0.number, $0.time, $0.name) < ($1.number, $1.time, $1.name) }
        var entries: [Entry] = [], superseded: [Entry] = []
        for entry in all {
            if let last = entries.last, last.number == entry.number {
                superseded.append(entries.removeLast())
            }
            entries.append(entry)
        }
        self.entries = entries
        self.superseded = superseded
        var snapshots: [Snapshot] = []
        var index = 0
        while index < entries.count {
            let first = entries[index]
            guard first.kind == .snapshot else {
                index += 1
                continue
            }
            var last = first
            while !last.isLastPart, index + 1 < entries.count, entries[index + 1].kind == .snapshot,
                  entries[index + 1].number == last.number + 1, entries[index + 1].time == first.time {
                index += 1
                last = entries[index]
            }
            snapshots.append(Snapshot(firstNumber: first.number, lastNumber: last.number, time: first.time, isComplete: last.isLastPart))
            index += 1
        }
        self.snapshots = snapshots
    }
}
