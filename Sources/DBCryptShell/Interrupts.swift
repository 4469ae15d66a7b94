import DBCrypt
import Foundation
import Synchronization

/// Ctrl-C during a session: SIGINT stops the running statement
/// (`sqlite3_interrupt`) instead of ending the process. The signal handler
/// only writes a byte to a pipe (what a handler may safely do); a thread
/// reading the pipe interrupts the connection the session named.
enum Interrupts {
    /// The write end of the pipe, for the handler; -1 before installation.
    private static let pipeWrite = Atomic<Int32>(-1)
    /// How many SIGINTs arrived, for the prompt to tell Ctrl-C from Ctrl-D.
    private static let count = Atomic<Int>(0)
    /// The connection Ctrl-C stops.
    private static let target = Mutex<DatabaseInterrupter?>(nil)

    /// Installs the handler and starts the thread, once per process.
    static func install() {
        guard pipeWrite.load(ordering: .acquiring) < 0 else { return }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        pipeWrite.store(ends[1], ordering: .releasing)
        let reader = ends[0]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(reader, &byte, 1) != 0 {
                target.withLock { $0?.interrupt() }
            }
        }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            Interrupts.count.add(1, ordering: .relaxed)
            LineEditor.noteInterrupt()
            var byte: UInt8 = 1
            _ = write(Interrupts.pipeWrite.load(ordering: .relaxed), &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        // No SA_RESTART: a read at the prompt returns, so Ctrl-C is seen there too.
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
    }

    /// Makes Ctrl-C stop what `interrupter`'s connection runs (nil: nothing).
    /// A Ctrl-C that came after `seen` (a count of ``received``), before
    /// the statement began, stops it at once.
    static func target(_ interrupter: DatabaseInterrupter?, seen: Int = received) {
        target.withLock { $0 = interrupter }
        if let interrupter, received != seen { interrupter.interrupt() }
    }

    /// The number of SIGINTs received so far.
    static var received: Int { count.load(ordering: .relaxed) }
}
