import Foundation
import SegmentsDomain

/// The live ``AppLifecycle``: forwards the platform's lifecycle notifications and asks it for
/// background time (<doc:Behaviour#E2>, <doc:Behaviour#E7>, <doc:Behaviour#T11>).
///
/// - iOS, tvOS, visionOS: UIKit's `UIApplication` notifications, and
///   `beginBackgroundTask(withName:expirationHandler:)` / `endBackgroundTask(_:)`.
/// - macOS: AppKit's `NSApplication` notifications (hiding and unhiding count as background and
///   foreground); no background time is needed.
/// - watchOS: WatchKit's application notifications, and `ProcessInfo.performExpiringActivity`.
/// - Linux: nothing arrives; an app may post events through a port of its own.
/// - Inside an app extension (a widget, a notification-service extension…): nothing arrives and no
///   background time is asked for; the shared application is never reached (<doc:Behaviour#P12>).
///
/// The platform files only name notifications and call the platform; the forwarding and every
/// decision is code that Linux builds and tests.
public struct SystemAppLifecycle: AppLifecycle {
    private let forwarding: NotificationAppLifecycle

    /// The live lifecycle of this platform (none inside an app extension).
    public init() {
        self.init(
            isAppExtension: AppExtension.isCurrent, center: .default, events: Self.platformEvents,
            beginBackgroundTime: Self.platformBackgroundTime)
    }

    /// The lifecycle `events` posted to `center` give, and background time from `begin`; neither
    /// inside an app extension, which has no app lifecycle and may not reach the shared application.
    init(
        isAppExtension: Bool, center: NotificationCenter, events: [(Notification.Name, AppLifecycleEvent)],
        beginBackgroundTime begin: @escaping NotificationAppLifecycle.BeginBackgroundTime
    ) {
        forwarding =
            isAppExtension
            ? NotificationAppLifecycle(center: center, events: [])
            : NotificationAppLifecycle(center: center, events: events, beginBackgroundTime: begin)
    }

    /// Forwards the platform's lifecycle notifications to `handler` until the observation ends.
    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> LifecycleObservation {
        forwarding.observe(handler)
    }

    /// Asks the platform for background time; where there is none, the request does nothing.
    public func beginBackgroundTime(named name: String, expiration: @escaping @Sendable () -> Void) -> BackgroundTimeRequest {
        forwarding.beginBackgroundTime(named: name, expiration: expiration)
    }
}

#if !(os(iOS) || os(tvOS) || os(visionOS) || os(macOS) || os(watchOS))
extension SystemAppLifecycle {
    /// Linux and other platforms: no lifecycle notifications.
    static let platformEvents: [(Notification.Name, AppLifecycleEvent)] = []

    /// No background time to ask for.
    static let platformBackgroundTime: NotificationAppLifecycle.BeginBackgroundTime = { _, _ in BackgroundTimeRequest {} }
}
#endif
