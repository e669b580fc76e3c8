import Foundation
import SegmentsDomain

/// The ports that live as long as one client, built once when the client is made: where and when
/// its work runs and is reported (``SegmentsRuntime``: scheduler, clock, logger, delivery queue,
/// jitter) and the one serial queue its files are read and written on.
///
/// The engine and the tracking pipelines of every configuration the client goes through take
/// this one value, so they share the storage queue: one client touches its folder from one queue,
/// in order (<doc:Behaviour#R1>). The ports of one configuration (backend, stores, pipeline,
/// storage claim) are ``SegmentationEngine/Ports``.
package struct ClientPorts: Sendable {
    /// Scheduler, clock, logger, delivery queue and jitter.
    package let runtime: SegmentsRuntime
    /// The serial queue every store load and save of the client runs on, off the caller's thread.
    package let storageQueue: DispatchQueue

    /// The client's ports over `runtime`, with `storageQueue` or, when it is `nil`, a new serial
    /// queue of the client's own: the one place a client's storage queue is made. A queue is never
    /// shared by default, as two clients on one queue would wait for each other when one hands its
    /// folder to the other.
    package init(runtime: SegmentsRuntime, storageQueue: DispatchQueue? = nil) {
        self.runtime = runtime
        self.storageQueue = storageQueue ?? DispatchQueue(label: "RealtimeSegments.storage")
    }
}
