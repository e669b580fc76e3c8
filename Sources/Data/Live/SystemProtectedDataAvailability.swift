import Foundation
import SegmentsDomain
#if os(iOS) || os(visionOS)
import UIKit
#endif

/// The live ``ProtectedDataAvailability`` (the `SegmentsDomain` port, <doc:Behaviour#P8>): on iOS
/// (Mac Catalyst included) and visionOS it forwards
/// `UIApplication.protectedDataDidBecomeAvailableNotification` and reports what UIKit last said;
/// elsewhere (macOS, tvOS, watchOS, Linux), where nothing signals the first unlock, it never signals
/// and reports protected data always available, so a refused file there is a `.storage` error
/// rather than a wait for a signal that never comes.
///
/// Forwarding only: what to redo is decided by the client, in code every platform builds.
public struct SystemProtectedDataAvailability: ProtectedDataAvailability {
    #if os(iOS) || os(visionOS)
    // Inside an app extension there is no shared application: unknown, so a refusal stays
    // transient until UIKit's notification says otherwise.
    private let state = NotificationProtectedDataState(
        becameAvailable: UIApplication.protectedDataDidBecomeAvailableNotification,
        willBecomeUnavailable: UIApplication.protectedDataWillBecomeUnavailableNotification, on: .default,
        current: { SharedApplication.current?.isProtectedDataAvailable ?? false })
    #endif

    /// Creates the live signal.
    public init() {}

    /// Calls `handler` on each `protectedDataDidBecomeAvailableNotification` (iOS, visionOS), until
    /// the observation ends; never elsewhere.
    public func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation {
        #if os(iOS) || os(visionOS)
        // Available since iOS 4 and on visionOS 1 (Apple's documentation; not on tvOS or
        // watchOS). Posted on the main thread; the handler only queues work.
        NotificationForwarding.observe(
            [(UIApplication.protectedDataDidBecomeAvailableNotification, ())], on: .default
        ) { _ in handler() }
        #else
        ProtectedDataObservation {}
        #endif
    }

    /// On iOS and visionOS, what UIKit last said (`UIApplication.isProtectedDataAvailable`, then its
    /// notifications), and `false` until it said anything: a refusal then stays transient, as
    /// before the first unlock. `true` elsewhere.
    public var isProtectedDataAvailable: Bool {
        #if os(iOS) || os(visionOS)
        state.isAvailable
        #else
        true
        #endif
    }
}
