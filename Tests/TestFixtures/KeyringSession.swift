import Foundation

/// A private D-Bus session bus with GNOME Keyring's Secret Service in it,
/// its login collection made and unlocked (scripts/keyring-session): the
/// real daemon the key store tests talk to, started headless. It ends with
/// ``end()``, or with this process: its shell waits on a pipe only this
/// process holds, and `dbus-run-session` stops the bus (and with it the
/// daemon) when that shell ends.
public final class KeyringSession: @unchecked Sendable {
    /// `DBUS_SESSION_BUS_ADDRESS` of the session.
    public let busAddress: String
    private let process = Process()
    private let keepAlive = Pipe()

    /// The one session the tests of this process share in-process:
    /// libsecret keeps its first connection to a bus for the life of the
    /// process, so this process's `DBUS_SESSION_BUS_ADDRESS` is set to it
    /// once, before the first use.
    public static let shared: KeyringSession = {
        do {
            let session = try KeyringSession()
            setenv("DBUS_SESSION_BUS_ADDRESS", session.busAddress, 1)
            return session
        } catch {
            fatalError("cannot start a D-Bus session with gnome-keyring: \(error)")
        }
    }()

    /// Starts a new session (scripts/keyring-session) and waits until its
    /// Secret Service answers.
    public init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/keyring-session")
        process.executableURL = script
        process.arguments = ["sh", "-c", "echo \"$DBUS_SESSION_BUS_ADDRESS\"; exec cat >/dev/null"]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["DBCRYPT_KEYRING_DIR"] = nil
        process.environment = environment
        let output = Pipe()
        process.standardInput = keepAlive
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 10 {
            line.append(first)
        }
        busAddress = String(decoding: line, as: UTF8.self)
        guard busAddress.hasPrefix("unix:") else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "scripts/keyring-session printed no bus address"])
        }
    }

    deinit { end() }

    /// Ends the session: the bus, and the daemon with it.
    public func end() {
        try? keepAlive.fileHandleForWriting.close()
        if process.isRunning { process.waitUntilExit() }
    }

    /// Locks the login collection, as a screen lock does; it cannot be
    /// unlocked again without a prompt, so only a session of its own is locked.
    public func lockLoginCollection() throws {
        let (status, _, complaint) = try runProgram(
            "/usr/bin/gdbus",
            ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
             "--method", "org.freedesktop.Secret.Service.Lock", "['/org/freedesktop/secrets/collection/login']"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": busAddress])
        guard status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "gdbus could not lock the collection: \(complaint)"])
        }
    }

    /// Runs `secret-tool` (libsecret's own command) in this session, with
    /// `input` on its standard input: exit status and what it printed.
    public func secretTool(_ arguments: [String], input: String? = nil) throws -> (status: Int32, printed: String) {
        let (status, printed, _) = try runProgram("/usr/bin/secret-tool", arguments, input: input,
                                          environment: ["DBUS_SESSION_BUS_ADDRESS": busAddress])
        return (status, printed)
    }
}
