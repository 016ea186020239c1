#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A D-Bus daemon of a test's own, configured as a system bus, with a stand-in NetworkManager
/// (`nm-stand-in`, built beside the tests) that a test starts, flips and ends: the network
/// rule tested against real parts (dbus-daemon, busctl, sd-bus), not a mock.
public final class PrivateSystemBus {
    /// Why tests that need a private bus cannot run here, or nil when they can.
    public static let unavailableReason: String? = {
        if !onPath("dbus-daemon") { return "dbus-daemon is not installed (.ci/install-deps installs dbus-daemon)" }
        if !onPath("busctl") { return "busctl is not installed (.ci/install-deps installs systemd)" }
        if !FileManager.default.isExecutableFile(atPath: standIn) { return "nm-stand-in is not built at \(standIn)" }
        return nil
    }()

    /// The stand-in executable, built next to the test bundle.
    static var standIn: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("nm-stand-in").path
    }

    /// The bus's address, for `DBUS_SYSTEM_BUS_ADDRESS` or an engine's configuration.
    public let address: String
    private let folder: String
    private let socket: String
    private var daemon: ChildProcess.Running?
    private var networkManager: ChildProcess.Running?
    private var stopped = false

    /// Starts the daemon and returns once its socket is there.
    public init() throws {
        // Short: a socket path must fit in 108 bytes.
        var template = Array("/tmp/offlinefs-bus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ChildProcess.Failed(description: "mkdtemp failed") }
        folder = String(cString: made)
        socket = folder + "/system_bus_socket"
        address = "unix:path=" + socket
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
        try startDaemon()
    }

    /// Starts the daemon (again) and returns once it listens.
    public func startDaemon() throws {
        stopDaemon()
        let child = try ChildProcess.start(["dbus-daemon", "--config-file=\(folder)/bus.conf", "--nofork"])
        daemon = child
        try Self.poll("dbus-daemon listening on \(socket)") {
            if child.wait(deadline: 0) { throw ChildProcess.Failed(description: "dbus-daemon ended: \(child.result().stderr)") }
            return FileManager.default.fileExists(atPath: socket)
        }
    }

    /// Ends the daemon (the stand-in too): the bus goes away under its clients.
    public func stopDaemon() {
        stopNetworkManager()
        guard let child = daemon else { return }
        daemon = nil
        child.kill(SIGTERM)
        _ = child.wait(deadline: 5)
        // Gone with the daemon, so that a wait for the next one's socket means something.
        unlink(socket)
    }

    deinit { stop() }

    /// Starts the stand-in NetworkManager with `Metered` = `metered` (NMMetered: 0 unknown,
    /// 1 yes, 2 no, 3 guess-yes, 4 guess-no) and returns once it owns its name.
    public func startNetworkManager(metered: UInt32 = 4) throws {
        stopNetworkManager()
        let child = try ChildProcess.start([Self.standIn, address, String(metered)])
        networkManager = child
        try Self.poll("nm-stand-in owning org.freedesktop.NetworkManager") {
            if child.wait(deadline: 0) { throw ChildProcess.Failed(description: "nm-stand-in ended: \(child.result().stderr)") }
            return child.currentOutput.contains("ready")
        }
    }

    /// Changes `Metered` as NetworkManager does (a PropertiesChanged signal follows), with
    /// `busctl set-property`.
    public func setMetered(_ value: UInt32) throws {
        let result = try ChildProcess.run(["busctl", "--address=\(address)", "set-property", "org.freedesktop.NetworkManager",
                                           "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager",
                                           "Metered", "u", String(value)])
        guard result.status == 0 else { throw ChildProcess.Failed(description: "busctl set-property: \(result.stderr)") }
    }

    /// Ends the stand-in: the bus announces that the name has no owner.
    public func stopNetworkManager() {
        guard let child = networkManager else { return }
        networkManager = nil
        child.kill(SIGTERM)
        _ = child.wait(deadline: 5)
    }

    /// Ends the stand-in and the daemon, and removes the bus's folder.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        stopDaemon()
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func onPath(_ program: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            .split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
    }

    /// Polls `condition` every 5 ms for at most 10 s.
    private static func poll(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw ChildProcess.Failed(description: "no \(what) within 10 s") }
            usleep(5000)
        }
    }
}
