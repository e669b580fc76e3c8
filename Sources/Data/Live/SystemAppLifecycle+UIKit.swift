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
            let id = SharedApplication.current?.beginBackgroundTask(withName: name) { expiration() } ?? .invalid
            guard id != .invalid else { return }
            if !slot.begun(id.rawValue) { SharedApplication.current?.endBackgroundTask(id) }
        }
        return BackgroundTimeRequest {
            guard let raw = slot.end() else { return }
            MainQueue.run { SharedApplication.current?.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: raw)) }
        }
    }
}

/// `UIApplication.shared`, reached at run time: code that names it does not compile into an app
/// extension (it is unavailable there), and the SDK links into extensions (<doc:Behaviour#P12>).
/// `nil` inside an extension, where the lifecycle features are off anyway.
enum SharedApplication {
    @MainActor static var current: UIApplication? {
        guard !AppExtension.isCurrent else { return nil }
        return (UIApplication.self as AnyObject).value(forKey: "sharedApplication") as? UIApplication
    }
}
#endif
