#if os(watchOS)
import Foundation
import SegmentsDomain

// Forwarding only (see SystemAppLifecycle): names and a call, no decisions. Not compiled on Linux.
extension SystemAppLifecycle {
    /// WatchKit's application notifications (watchOS 7 and later), named by their string values:
    /// the `WKExtension` constants are main-actor isolated, and a client may be made on any thread.
    static let platformEvents: [(Notification.Name, AppLifecycleEvent)] = [
        (Notification.Name("WKApplicationDidBecomeActiveNotification"), .didBecomeActive),
        (Notification.Name("WKApplicationWillResignActiveNotification"), .willResignActive),
        (Notification.Name("WKApplicationDidEnterBackgroundNotification"), .didEnterBackground),
        (Notification.Name("WKApplicationWillEnterForegroundNotification"), .willEnterForeground),
    ]

    /// `ProcessInfo.performExpiringActivity`, which watchOS has where UIKit's background tasks are missing.
    static let platformBackgroundTime: NotificationAppLifecycle.BeginBackgroundTime = { name, expiration in
        ExpiringActivity.begin(named: name, expiration: expiration) { reason, block in
            ProcessInfo.processInfo.performExpiringActivity(withReason: reason, using: block)
        }
    }
}
#endif
