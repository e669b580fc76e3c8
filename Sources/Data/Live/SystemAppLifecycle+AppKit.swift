#if os(macOS)
import AppKit
import Foundation
import SegmentsDomain

// Forwarding only (see SystemAppLifecycle): names, no decisions. Not compiled on Linux.
extension SystemAppLifecycle {
    /// AppKit's notifications; a Mac app is not suspended in the background, so hiding and
    /// unhiding stand for entering the background and returning to the foreground.
    static let platformEvents: [(Notification.Name, AppLifecycleEvent)] = [
        (NSApplication.didBecomeActiveNotification, .didBecomeActive),
        (NSApplication.willResignActiveNotification, .willResignActive),
        (NSApplication.didHideNotification, .didEnterBackground),
        (NSApplication.willUnhideNotification, .willEnterForeground),
    ]

    /// A Mac app keeps running in the background: nothing to ask for.
    static let platformBackgroundTime: NotificationAppLifecycle.BeginBackgroundTime = { _, _ in BackgroundTimeRequest {} }
}
#endif
