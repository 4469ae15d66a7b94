// Values tests share between threads and tasks, each written once.
import Synchronization

/// A flag one thread or task raises and others read.
public final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// A flag not raised yet.
    public init() {}

    /// Raises the flag.
    public func raise() { raised.store(true, ordering: .sequentiallyConsistent) }

    /// Whether the flag was raised.
    public var isRaised: Bool { raised.load(ordering: .sequentiallyConsistent) }
}

/// Values appended from several threads or tasks, read back in order.
public final class Collected<Element: Sendable>: Sendable {
    private let values = Mutex<[Element]>([])

    /// Nothing collected yet.
    public init() {}

    /// Appends `value`.
    public func append(_ value: Element) { values.withLock { $0.append(value) } }

    /// Everything appended so far.
    public var all: [Element] { values.withLock { $0 } }
}
