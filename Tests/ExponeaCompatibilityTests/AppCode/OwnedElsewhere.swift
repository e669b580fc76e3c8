// Exponea 4.x call sites of members another change owns (anonymize(completion:),
// stopIntegration(completion:), defaultProperties). Excluded from both compile-test targets in
// Package.swift until those members land; then remove the `exclude:` entries.
import Foundation
import RealtimeSegments

extension ShopAnalytics {
    func signOut(_ done: @escaping @Sendable () -> Void) {
        exponea.anonymize {
            done()
        }
    }

    func leave(_ done: @escaping @Sendable () -> Void) {
        exponea.stopIntegration {
            done()
        }
    }

    func setDefaultProperties(version: String) {
        exponea.defaultProperties = ["app_version": version, "platform": "ios"]
        let current: [String: JSONConvertible]? = exponea.defaultProperties
        _ = current
    }
}
