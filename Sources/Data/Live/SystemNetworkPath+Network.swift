#if canImport(Network)
import Foundation
import Network
import SegmentsDomain

extension SystemNetworkPath {
    /// `NWPathMonitor` (iOS 12, macOS 10.14, tvOS 12, watchOS 5; allowed in app extensions): a
    /// `satisfied` path is usable, any other is not; constrained and expensive paths are usable
    /// (<doc:Behaviour#N3>). The monitor reports on its own queue and is cancelled when the
    /// observation ends.
    static let platformMonitor: StartMonitor? = { report in
        let box = PathMonitorBox()
        box.monitor.pathUpdateHandler = { path in report(path.status == .satisfied ? .usable : .unusable) }
        box.monitor.start(queue: DispatchQueue(label: "RealtimeSegments.networkPath"))
        return LifecycleObservation { box.monitor.cancel() }
    }
}

/// Holds an `NWPathMonitor`, which Apple documents as safe to cancel from any thread.
private final class PathMonitorBox: @unchecked Sendable {
    let monitor = NWPathMonitor()
}
#endif
