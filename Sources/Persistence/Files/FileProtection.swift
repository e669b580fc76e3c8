import Foundation

/// The data-protection class of what the stores create on Apple's mobile platforms
/// (<doc:Behaviour#P8>): protected until the device's first unlock after a restart, then readable
/// in the background even while the device is locked again.
enum FileProtection {
    /// Gives a directory the stores just created the class
    /// `completeUntilFirstUserAuthentication`. Best effort, and nothing elsewhere.
    ///
    /// Set on the directory rather than on each file: the POSIX `open` the stores use has no
    /// protection argument (only the private-looking `open_dprotected_np` has), and Apple's
    /// documentation (Developer Technical Support, forum thread 706258) says files created in a
    /// directory default to that directory's data protection. It is also iOS's default class for
    /// an app's files ("Encrypting Your App's Files"), so this only keeps an app-wide stronger
    /// default (the Data Protection entitlement's `complete`) from making the SDK's files
    /// unreadable whenever the device is locked.
    static func protectUntilFirstUnlock(directory path: String) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try? FileManager.default.setAttributes(
            [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: path)
        #endif
    }
}
