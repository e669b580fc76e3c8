/// Whether the device can reach the network now, as the platform reports it (<doc:Behaviour#N1>).
///
/// Constrained (Low Data Mode) and expensive (cellular, personal hotspot) paths are usable: the SDK
/// sends what it has over them (<doc:Behaviour#N3>).
public enum NetworkPathStatus: String, Sendable, Hashable, CaseIterable {
    /// A path exists: uploads and segment requests may start.
    case usable
    /// No path: no upload and no segment request starts; queued items wait, no retry is counted,
    /// and a one-shot read that needs the network fails at once with ``SegmentsError/Reason/offline``
    /// (<doc:Behaviour#N1>).
    case unusable
}

/// The device's network path as the SDK sees it (<doc:Behaviour#N1>–<doc:Behaviour#N3>): a boundary
/// like the clock and ``AppLifecycle``. The client takes it from its options
/// (`SegmentsClient.Options.networkPath`).
///
/// The live implementation, `SystemNetworkPath`, forwards `NWPathMonitor` on Apple platforms; on
/// Linux the path is usable unless the app posts otherwise. Tests drive `ManualNetworkPath` from
/// `SegmentsTesting`.
///
/// What the SDK does when the path goes and comes back — which uploads wait, which reads fail,
/// when the queue is flushed and segments reloaded — is decided in code every platform builds; an
/// implementation only reports.
public protocol NetworkPath: Sendable {
    /// Calls `handler` with the current status once, at registration or soon after (on the
    /// calling thread or the platform's), then with every status the platform reports, on any
    /// thread, until the returned observation is cancelled or released. Reports of the same status
    /// twice in a row are allowed: the SDK acts only on changes. The handler returns quickly: it
    /// only starts work.
    func observe(_ handler: @escaping @Sendable (NetworkPathStatus) -> Void) -> LifecycleObservation
}

/// One registration of ``NetworkPath/observe(_:)``.
public typealias NetworkPathObservation = LifecycleObservation
