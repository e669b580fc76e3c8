/// A change in the app's life that the SDK acts on.
///
/// The names follow UIKit's notifications. On platforms without a background (macOS) the live
/// port maps hiding and unhiding the app to ``didEnterBackground`` and ``willEnterForeground``.
public enum AppLifecycleEvent: String, Sendable, Hashable, CaseIterable {
    /// The app became active (in front, receiving events).
    case didBecomeActive
    /// The app is about to stop being active (a call, the app switcher, the screen locking).
    /// Periodic and automatic flushing upload what is queued (<doc:Behaviour#E2>).
    case willResignActive
    /// The app went to the background: the SDK uploads what is queued, within background time it
    /// asks the platform for (<doc:Behaviour#E2>, <doc:Behaviour#E7>).
    case didEnterBackground
    /// The app is about to return to the foreground: listeners get fresh segments when the last
    /// reload is older than the foreground refresh age (<doc:Behaviour#T11>).
    case willEnterForeground
}

/// The app's lifecycle as the SDK sees it: the events it reacts to and the background execution
/// time it may ask for. A boundary like the clock: the client takes it from its options
/// (`SegmentsClient.Options.appLifecycle`).
///
/// The live implementation, `SystemAppLifecycle`, forwards UIKit's notifications and background
/// tasks on iOS, tvOS and visionOS, AppKit's notifications on macOS and WatchKit's on watchOS; on
/// Linux nothing arrives unless the app posts it. Tests drive `ManualAppLifecycle` from
/// `SegmentsTesting`, which also records every request for background time and whether it ended.
///
/// What the SDK does with the events — which flushing modes upload, when background time is asked
/// for and ended, when segments are refreshed — is decided in code every platform builds; an
/// implementation only forwards.
public protocol AppLifecycle: Sendable {
    /// Calls `handler` for each lifecycle event, on the thread the platform reports it on (the
    /// main thread on Apple platforms), until the returned observation is cancelled or released.
    /// The handler returns quickly: it only starts work.
    func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> LifecycleObservation

    /// Asks the platform for time to finish work after the app went to the background (UIKit's
    /// `beginBackgroundTask(withName:expirationHandler:)`).
    ///
    /// The caller ends the request by cancelling the returned ``BackgroundTimeRequest`` when the
    /// work is done; `expiration` is called (at most once, on any thread) when the time runs out
    /// before that, and must end the request before it returns. A platform without background
    /// time returns a request whose end does nothing.
    func beginBackgroundTime(named name: String, expiration: @escaping @Sendable () -> Void) -> BackgroundTimeRequest
}
