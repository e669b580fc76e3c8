import Foundation
import SegmentsDomain

/// Whether protected data is available, as a platform reports it, readable at once from any thread
/// (<doc:Behaviour#P8>): the platform's answer, read on the main actor when this is made, then kept
/// up to date by its two notifications. Until either has said anything it answers `false`, so a
/// refused file then stays transient, as before the first unlock.
///
/// Built and tested on every platform; `SystemProtectedDataAvailability` gives it UIKit's
/// notification names and `UIApplication.isProtectedDataAvailable` on iOS and visionOS.
package final class NotificationProtectedDataState: Sendable {
    /// `nil` until the platform said anything.
    private let available: Locked<Bool?>
    /// The notifications' registration, ended with this object.
    private let observation: LifecycleObservation

    /// Follows `becameAvailable` and `willBecomeUnavailable` on `center` (posted on any thread),
    /// and asks `current` on the main actor (at once when made there, else queued). A notification
    /// that comes before that answer is newer than it, and is kept.
    package init(
        becameAvailable: Notification.Name, willBecomeUnavailable: Notification.Name, on center: NotificationCenter,
        current: @escaping @MainActor @Sendable () -> Bool
    ) {
        let available = Locked<Bool?>(nil)
        self.available = available
        observation = NotificationForwarding.observe(
            [(becameAvailable, true), (willBecomeUnavailable, false)], on: center
        ) { value in available.withLock { $0 = value } }
        MainQueue.run {
            let now = current()
            available.withLock { if $0 == nil { $0 = now } }
        }
    }

    /// Whether protected data is available; `false` while unknown.
    package var isAvailable: Bool {
        available.withLock { $0 } ?? false
    }
}
