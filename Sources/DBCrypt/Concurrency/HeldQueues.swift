#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The database queues and pools whose closures are running on the current
/// thread, outermost first, each with whether the closure reads or writes:
/// what tells a re-entrant call (`a { b { a { } } }`, which would wait on
/// itself forever) from a call that may wait. Dispatch's queue-specific
/// values only see the innermost queue, so this is a thread-local list of
/// its own.
enum HeldQueues {
    /// What a closure was given its connection for.
    enum Role {
        /// A read: a pool's reader, or a queue's connection in a read.
        case read
        /// A write, or a queue's connection in any closure that may write.
        case write
    }

    /// The current thread's list, boxed so a pthread key can hold it.
    private final class List {
        var queues: [(queue: ObjectIdentifier, role: Role)] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<List>.fromOpaque(pointer).release()
        }
        precondition(code == 0, "DBCrypt could not create a thread-local key (pthread_key_create: \(code))")
        return key
    }()

    private static var current: List {
        if let pointer = pthread_getspecific(key) { return Unmanaged<List>.fromOpaque(pointer).takeUnretainedValue() }
        let list = List()
        pthread_setspecific(key, Unmanaged.passRetained(list).toOpaque())
        return list
    }

    /// Whether a closure of `queue` is running on this thread, at any depth.
    static func contains(_ queue: AnyObject) -> Bool {
        current.queues.contains { $0.queue == ObjectIdentifier(queue) }
    }

    /// Throws when waiting for `queue`'s writer would wait forever: a closure
    /// of `queue` runs on this thread, or the current task holds its writer in
    /// a ``WriterSession`` (which serves only that session's statements).
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, or
    ///   ``DatabaseError/misuse(reason:)`` from inside a writer session.
    static func checkWriterIsFree(_ queue: AnyObject) throws {
        guard !contains(queue) else { throw DatabaseError.reentrantQueueAccess }
        guard !WriterSession.heldByCurrentTask.contains(ObjectIdentifier(queue)) else {
            throw DatabaseError.misuse(reason: "this task holds the database's writer in a transaction (an SQLKit session or a Fluent "
                + "transaction): run the statement through that transaction, which would otherwise wait for itself forever")
        }
    }

    /// What the closure of `queue` running on this thread does, or nil when none runs.
    static func role(of queue: AnyObject) -> Role? {
        current.queues.last { $0.queue == ObjectIdentifier(queue) }?.role
    }

    /// Runs `body` with `queue` recorded as held by this thread for `role`.
    static func holding<T>(_ queue: AnyObject, as role: Role = .write, _ body: () throws -> T) rethrows -> T {
        let list = current
        list.queues.append((ObjectIdentifier(queue), role))
        defer { list.queues.removeLast() }
        return try body()
    }
}
