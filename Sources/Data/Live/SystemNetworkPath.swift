import Foundation
import SegmentsDomain

/// The live ``NetworkPath`` (<doc:Behaviour#N3>): on Apple platforms it forwards `NWPathMonitor`
/// (a path whose status is `satisfied` is usable; constrained and expensive paths count as usable);
/// on Linux, where nothing reports the path, it is usable unless the app posts otherwise with
/// ``post(_:)``.
///
/// The platform file only starts the monitor and maps its status; keeping the status, telling
/// observers of changes only, and what the app posts are code that Linux builds and tests. Nothing
/// here is unavailable in app extensions.
public final class SystemNetworkPath: NetworkPath {
    /// Starts a platform monitor that reports each path it sees to `report`, until the returned
    /// observation ends.
    typealias StartMonitor = @Sendable (_ report: @escaping @Sendable (NetworkPathStatus) -> Void) -> LifecycleObservation

    private struct State: Sendable {
        var status: NetworkPathStatus
        var next = 0
        var handlers: [Int: @Sendable (NetworkPathStatus) -> Void] = [:]
        /// The platform monitor's registration: released with the path, which ends it.
        var monitor: LifecycleObservation?
        var monitorStarted = false
    }

    private let state: Locked<State>
    private let startMonitor: StartMonitor?

    /// The live path of this platform: `NWPathMonitor` where the Network framework exists, else
    /// usable until the app posts otherwise.
    public convenience init() {
        self.init(initial: .usable, startMonitor: Self.platformMonitor)
    }

    /// A path that starts as `initial` and is fed by the monitor `startMonitor` starts, on the first
    /// observation; `nil`: only what is posted.
    init(initial: NetworkPathStatus, startMonitor: StartMonitor?) {
        state = Locked(State(status: initial))
        self.startMonitor = startMonitor
    }

    /// The status reported last (usable until something says otherwise).
    public var status: NetworkPathStatus { state.withLock { $0.status } }

    /// Calls `handler` with the current status at once, on the calling thread, then with each
    /// change, until the observation ends. The first observation starts the platform's monitor.
    public func observe(_ handler: @escaping @Sendable (NetworkPathStatus) -> Void) -> LifecycleObservation {
        let (id, current, startNow) = state.withLock { state -> (Int, NetworkPathStatus, Bool) in
            state.next += 1
            state.handlers[state.next] = handler
            let start = !state.monitorStarted && startMonitor != nil
            state.monitorStarted = true
            return (state.next, state.status, start)
        }
        handler(current)
        if startNow, let startMonitor {
            // Started outside the lock: it may report at once, on this thread.
            let monitor = startMonitor { [weak self] status in self?.post(status) }
            state.withLock { $0.monitor = monitor }
        }
        return LifecycleObservation { [weak self] in
            _ = self?.state.withLock { $0.handlers.removeValue(forKey: id) }
        }
    }

    /// Reports `status` as the platform would: every observer is told when it differs from the last
    /// one (on the calling thread, outside the lock). On Linux this is the only source; on Apple
    /// platforms the monitor's next report replaces it.
    public func post(_ status: NetworkPathStatus) {
        let handlers = state.withLock { state -> [@Sendable (NetworkPathStatus) -> Void] in
            guard state.status != status else { return [] }
            state.status = status
            return state.handlers.sorted { $0.key < $1.key }.map(\.value)
        }
        for handler in handlers { handler(status) }
    }
}

#if !canImport(Network)
extension SystemNetworkPath {
    /// Linux and other platforms without the Network framework: no monitor.
    static let platformMonitor: StartMonitor? = nil
}
#endif
