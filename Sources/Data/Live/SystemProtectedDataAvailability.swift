import Foundation
import SegmentsDomain
#if os(iOS) || os(visionOS)
import UIKit
#endif

/// The live ``ProtectedDataAvailability`` (the `SegmentsDomain` port, <doc:Behaviour#P8>): on iOS
/// (Mac Catalyst included) and visionOS it forwards
/// `UIApplication.protectedDataDidBecomeAvailableNotification`; elsewhere (macOS, tvOS, watchOS,
/// Linux), where the SDK's files are not protected until the first unlock, it never signals.
///
/// Forwarding only: what to redo is decided by the client, in code every platform builds.
public struct SystemProtectedDataAvailability: ProtectedDataAvailability {
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
}
