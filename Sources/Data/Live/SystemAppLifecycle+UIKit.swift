#if os(iOS) || os(tvOS) || os(visionOS)
import Foundation
import SegmentsDomain
import UIKit

// Forwarding only (see SystemAppLifecycle): names and calls, no decisions. Not compiled on Linux.
extension SystemAppLifecycle {
    /// UIKit's notifications (`nonisolated` constants, posted on the main thread).
    static let platformEvents: [(Notification.Name, AppLifecycleEvent)] = [
        (UIApplication.didBecomeActiveNotification, .didBecomeActive),
        (UIApplication.willResignActiveNotification, .willResignActive),
        (UIApplication.didEnterBackgroundNotification, .didEnterBackground),
        (UIApplication.willEnterForegroundNotification, .willEnterForeground),
    ]

    /// `beginBackgroundTask`/`endBackgroundTask` on the main thread (`UIApplication` is main-actor
    /// isolated): at once when asked there, as on a lifecycle notification or in the expiration
    /// handler; else queued on the main queue, the slot keeping the order right.
    static let platformBackgroundTime: NotificationAppLifecycle.BeginBackgroundTime = { name, expiration in
        let slot = BackgroundTaskSlot<Int>()
        MainQueue.run {
            let id = UIApplication.shared.beginBackgroundTask(withName: name) { expiration() }
            guard id != .invalid else { return }
            if !slot.begun(id.rawValue) { UIApplication.shared.endBackgroundTask(id) }
        }
        return BackgroundTimeRequest {
            guard let raw = slot.end() else { return }
            MainQueue.run { UIApplication.shared.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: raw)) }
        }
    }
}
#endif
