#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The database queues whose closures are running on the current thread,
/// outermost first: what tells a re-entrant call (`a { b { a { } } }`, which
/// would wait on itself forever) from a call that may wait. Dispatch's
/// queue-specific values only see the innermost queue, so this is a
/// thread-local list of its own.
enum HeldQueues {
    /// The current thread's list, boxed so a pthread key can hold it.
    private final class List {
        var queues: [ObjectIdentifier] = []
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
        current.queues.contains(ObjectIdentifier(queue))
    }

    /// Runs `body` with `queue` recorded as held by this thread.
    static func holding<T>(_ queue: AnyObject, _ body: () throws -> T) rethrows -> T {
        let list = current
        list.queues.append(ObjectIdentifier(queue))
        defer { list.queues.removeLast() }
        return try body()
    }
}
