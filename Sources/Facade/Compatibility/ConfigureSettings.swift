import Foundation
import SegmentsDomain

extension Exponea {
    /// The Exponea SDK's push notification settings. Push is outside this SDK: accepted so
    /// configure calls compile, not applied; `.enabled(…)` is named in configure's one warning
    /// (<doc:Behaviour#X1>).
    public struct PushNotificationTracking: Sendable, Hashable {
        /// Whether push tracking was asked for.
        let isEnabled: Bool
        /// The app group given to `.enabled`.
        let appGroup: String?

        private init(isEnabled: Bool, appGroup: String?) {
            self.isEnabled = isEnabled
            self.appGroup = appGroup
        }

        /// Push tracking asked for; ignored here, and the delegate is not kept.
        public static func enabled(
            appGroup: String, delegate: (any PushNotificationManagerDelegate)? = nil, requirePushAuthorization: Bool = true,
            tokenTrackFrequency: TokenTrackFrequency = .onTokenChange
        ) -> PushNotificationTracking {
            PushNotificationTracking(isEnabled: true, appGroup: appGroup)
        }

        /// No push tracking.
        public static let disabled = PushNotificationTracking(isEnabled: false, appGroup: nil)
    }

    /// The Exponea SDK's deprecated automatic (swizzling) push settings. Push is outside this SDK:
    /// accepted, not applied; `.enabled(…)` is named in configure's one warning.
    public struct AutomaticPushNotificationTracking: Sendable, Hashable {
        /// Whether automatic push tracking was asked for.
        let enabled: Bool
        /// The app group given to `.enabled`.
        let appGroup: String?

        private init(enabled: Bool, appGroup: String?) {
            self.enabled = enabled
            self.appGroup = appGroup
        }

        /// Automatic push tracking asked for; ignored here, and the delegate is not kept.
        public static func enabled(
            appGroup: String, delegate: (any PushNotificationManagerDelegate)? = nil, requirePushAuthorization: Bool = true,
            tokenTrackFrequency: TokenTrackFrequency = .onTokenChange
        ) -> AutomaticPushNotificationTracking {
            AutomaticPushNotificationTracking(enabled: true, appGroup: appGroup)
        }

        /// No automatic push tracking.
        public static let disabled = AutomaticPushNotificationTracking(enabled: false, appGroup: nil)
    }

    /// The Exponea SDK's session tracking settings. Sessions are outside this SDK (no
    /// `session_start` or `session_end` events are tracked): accepted, not applied; `.enabled`,
    /// the Exponea SDK's default, is named in configure's one warning (<doc:Behaviour#X1>).
    public struct AutomaticSessionTracking: Sendable, Hashable {
        /// Whether automatic session tracking was asked for.
        let enabled: Bool
        /// The session time-out, in seconds.
        let timeout: Double

        private init(enabled: Bool, timeout: Double) {
            self.enabled = enabled
            self.timeout = timeout
        }

        /// Session tracking asked for (with a 60 s time-out by default); ignored here.
        public static func enabled(timeout: Double = 60) -> AutomaticSessionTracking {
            AutomaticSessionTracking(enabled: true, timeout: timeout)
        }

        /// No session tracking.
        public static let disabled = AutomaticSessionTracking(enabled: false, timeout: 60)
    }
}
