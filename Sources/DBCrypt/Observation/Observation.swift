import Dispatch
import Synchronization

/// The observations of one queue or pool, and the commits they hear about.
final class ObservationCenter: Sendable {
    private struct State {
        var observers: [ObjectIdentifier: Observer] = [:]
        /// Every table some observer read; nil when one of them counts any
        /// commit. Recomputed when stale, so that a commit to a table nobody
        /// observes costs one lookup, however many observations there are.
        var observedTables: Set<String>? = []
        var observedTablesAreStale = false
    }
    private let state = Mutex(State())

    func add(_ observer: Observer) {
        state.withLock { state in
            state.observers[ObjectIdentifier(observer)] = observer
            state.observedTablesAreStale = true
        }
    }

    func remove(_ observer: Observer) {
        state.withLock { state in
            state.observers[ObjectIdentifier(observer)] = nil
            state.observedTablesAreStale = true
        }
    }

    /// Called by an observer whose tables changed with its last fetch.
    func regionsChanged() {
        state.withLock { $0.observedTablesAreStale = true }
    }

    /// How many observations are registered.
    var count: Int {
        state.withLock { $0.observers.count }
    }

    /// Tells every observer that read one of `tables` to fetch again. Called
    /// on the writer's thread right after the commit: it only schedules.
    func committed(_ tables: Set<String>) {
        guard !tables.isEmpty else { return }
        let interested = state.withLock { state -> [Observer] in
            if state.observedTablesAreStale {
                state.observedTables = []
                for observer in state.observers.values {
                    guard let region = observer.tablesRead else {
                        state.observedTables = nil
                        break
                    }
                    state.observedTables!.formUnion(region)
                }
                state.observedTablesAreStale = false
            }
            if let observedTables = state.observedTables, observedTables.isDisjoint(with: tables) { return [] }
            return state.observers.values.filter { $0.mayHaveRead(tables) }
        }
        for observer in interested { observer.scheduleFetch() }
    }

    /// Tells every observer that asked for other connections' commits to
    /// fetch again: one was noticed, and what it changed is not known.
    func otherConnectionCommitted() {
        let asking = state.withLock { $0.observers.values.filter(\.noticesOtherConnections) }
        for observer in asking { observer.scheduleFetch() }
    }
}

/// One observation: fetches on its own serial queue, one fetch at a time,
/// and again after each commit that may have changed what it read.
final class Observer: Sendable {
    private struct State {
        /// The tables the last fetch read; nil until the first fetch, or when
        /// they could not be told: any commit then counts.
        var region: Set<String>?
        /// While a fetch runs any commit counts: it may change what that fetch
        /// reads after its snapshot, in tables the previous fetch did not read.
        var isFetching = false
        var needsFetch = false
        var cancelled = false
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "DBCrypt.Observation")
    /// Fetches the value; returns the tables it read and what delivers it
    /// (which returns false when the observation is over: it failed, or
    /// nobody listens).
    private let fetchValue: @Sendable () -> (tablesRead: Set<String>, deliver: @Sendable () -> Bool)

    /// Told when the tables an observer counts change.
    private let regionsChanged: @Sendable () -> Void
    /// Whether commits made through other connections fetch again.
    let noticesOtherConnections: Bool

    init(noticesOtherConnections: Bool, regionsChanged: @escaping @Sendable () -> Void,
         fetchValue: @escaping @Sendable () -> (tablesRead: Set<String>, deliver: @Sendable () -> Bool)) {
        self.noticesOtherConnections = noticesOtherConnections
        self.regionsChanged = regionsChanged
        self.fetchValue = fetchValue
    }

    /// The tables whose commits this observer counts; nil when any commit counts.
    var tablesRead: Set<String>? {
        state.withLock { state -> Set<String>? in state.isFetching ? nil : state.region }
    }

    func mayHaveRead(_ tables: Set<String>) -> Bool {
        guard let region = tablesRead else { return true }
        return !region.isDisjoint(with: tables)
    }

    /// Fetches soon, once, however many commits call this before the fetch begins.
    func scheduleFetch() {
        let alreadyScheduled = state.withLock { state -> Bool in
            let alreadyScheduled = state.needsFetch || state.cancelled
            state.needsFetch = true
            return alreadyScheduled
        }
        guard !alreadyScheduled else { return }
        queue.async { self.fetch() }
    }

    private func fetch() {
        let isOver = state.withLock { state -> Bool in
            state.needsFetch = false
            let isOver = state.cancelled
            if !isOver { state.isFetching = true }
            return isOver
        }
        guard !isOver else { return }
        regionsChanged()
        let (tables, deliver) = fetchValue()
        state.withLock { state in
            state.region = tables.isEmpty ? nil : tables
            state.isFetching = false
        }
        regionsChanged()
        // Delivered once the region is in place: a commit the receiver makes
        // next is counted against what this value was read from.
        if !deliver() { cancel() }
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
    }

    /// Whether the observation is over.
    var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }
}

/// Starts an observation of `center`'s commits: the stream's first value is
/// fetched at once, then again after each commit that changed a table the
/// previous fetch read, and, with `pollingEvery`, after commits of other
/// connections that `poller` notices. `prepare` makes the writer report its
/// commits, then calls back; `fetch` runs a fetch with the tables it read
/// recorded.
func observation<T: Sendable>(
    center: ObservationCenter, removingDuplicates isDuplicate: (@Sendable (T, T) -> Bool)?,
    poller: OtherConnectionsPoller, pollingEvery interval: Duration?,
    prepare: @escaping @Sendable (_ then: @escaping @Sendable (Error?) -> Void) -> Void,
    fetch: @escaping @Sendable () throws -> (T, Set<String>)
) -> AsyncThrowingStream<T, Error> {
    AsyncThrowingStream { continuation in
        let last = LastValue<T>()
        let observer = Observer(noticesOtherConnections: interval != nil, regionsChanged: { center.regionsChanged() }) {
            do {
                let (value, tables) = try fetch()
                return (tables, {
                    if let isDuplicate, let previous = last.swap(value), isDuplicate(previous, value) { return true }
                    if case .terminated = continuation.yield(value) { return false }
                    return true
                })
            } catch {
                return ([], {
                    continuation.finish(throwing: error)
                    return false
                })
            }
        }
        continuation.onTermination = { _ in
            observer.cancel()
            center.remove(observer)
            poller.stop(for: ObjectIdentifier(observer))
        }
        // Once the writer reports its commits: registered before the first
        // fetch, with no region yet, so that a commit made while it runs
        // fetches again rather than being missed.
        prepare { error in
            if let error { return continuation.finish(throwing: error) }
            center.add(observer)
            // Ended meanwhile: whichever of this and onTermination came last removes it.
            guard !observer.isCancelled else { return center.remove(observer) }
            guard let interval else { return observer.scheduleFetch() }
            poller.start(every: interval, for: ObjectIdentifier(observer)) {
                guard observer.isCancelled else { return observer.scheduleFetch() }
                poller.stop(for: ObjectIdentifier(observer))
            }
        }
    }
}

/// The value an observation delivered last, for dropping duplicates.
private final class LastValue<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)

    /// Stores `new` and returns the value it replaces.
    func swap(_ new: T) -> T? {
        value.withLock { value in
            let old = value
            value = new
            return old
        }
    }
}
