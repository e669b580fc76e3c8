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
    private let state = UIKitProtectedDataState()
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

#if os(iOS) || os(visionOS)
/// UIKit's protected-data availability, readable from any thread: `UIApplication` is main-actor
/// isolated, so the answer is read on the main queue (at once when made there, else queued) and
/// kept up to date by the two notifications, posted on the main thread.
final class UIKitProtectedDataState: Sendable {
    /// `nil` until UIKit said anything.
    private let available: Locked<Bool?>
    /// The notifications' registration, ended with this object.
    private let observation: LifecycleObservation

    init() {
        let available = Locked<Bool?>(nil)
        self.available = available
        observation = NotificationForwarding.observe(
            [
                (UIApplication.protectedDataDidBecomeAvailableNotification, true),
                (UIApplication.protectedDataWillBecomeUnavailableNotification, false),
            ], on: .default
        ) { value in available.withLock { $0 = value } }
        MainQueue.run {
            let now = UIApplication.shared.isProtectedDataAvailable
            // A notification that came first is newer than this answer.
            available.withLock { if $0 == nil { $0 = now } }
        }
    }

    /// Whether protected data is available; `false` while unknown.
    var isAvailable: Bool {
        available.withLock { $0 } ?? false
    }
}
#endif
