import Foundation

/// Whether this process is an app extension — a widget, a share, action or notification-service
/// extension — rather than an app (<doc:Behaviour#P12>).
///
/// Inside an extension there is no `UIApplication.shared` (extensions may not call it) and no app
/// lifecycle to follow, so the app-lifecycle features are off there: `SystemAppLifecycle` forwards no
/// notification and asks for no background time (<doc:Behaviour#E7>, <doc:Behaviour#T11>), and the
/// SDK never reaches the shared application. A watchOS app's WatchKit extension is the app itself,
/// with WatchKit's own lifecycle: it does not count.
package enum AppExtension {
    /// Whether the bundle at `bundleURL`, with `info` as its Info.plist, is an app extension: its
    /// folder is an `.appex`, or its Info.plist has an `NSExtension` entry.
    package static func isExtension(bundleURL: URL, info: [String: Any]?) -> Bool {
        bundleURL.pathExtension.lowercased() == "appex" || info?["NSExtension"] != nil
    }

    /// Whether this process is an app extension (always `false` on watchOS and Linux).
    package static let isCurrent: Bool = {
        #if os(watchOS)
        false
        #else
        isExtension(bundleURL: Bundle.main.bundleURL, info: Bundle.main.infoDictionary)
        #endif
    }()
}
