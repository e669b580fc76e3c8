import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence

extension SegmentsClient.Options {
    /// Checks every duration the options carry (<doc:Behaviour#P7>): the debounce and max wait, the
    /// cache time, both backoffs (automatic reloads and uploads), whose first delay must be more than
    /// 0 — a zero backoff would retry in a tight loop — and the foreground refresh age
    /// (<doc:Behaviour#T11>), which must be finite and not negative.
    ///
    /// ``SegmentsClient/configure(_:)`` calls it; calling it earlier lets an app fail early.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`.
    public func validate() throws {
        try timings.debounce.validate()
        try timings.cache.validate()
        try timings.retry.validate()
        try uploadRetry.validate()
        let age = timings.foregroundRefreshAge
        guard age.isFinite, age >= 0 else {
            throw SegmentsError(
                .invalidConfiguration, "The foreground refresh age must be a finite number of seconds, 0 or more, not \(age)")
        }
    }
}

extension SegmentsClient.Backend {
    /// The id that names the integration's default storage folder. A secret never appears in it
    /// (<doc:Behaviour#P4>): ODP integrations, identified by their API key, use a hash of the key.
    var storageIntegrationId: String {
        switch self {
        case .bloomreach(let bloomreach):
            switch bloomreach.integration {
            case .project(let token): "project-\(token)"
            case .stream(let id): "stream-\(id)"
            }
        case .odp(let odp, _, _): StorageLocation.integrationId(kind: "odp", secret: odp.apiKey)
        case .custom(let id, _, _): "custom-\(id)"
        }
    }

    /// The id an earlier version used when it named the folder after a secret, if any: that
    /// folder is renamed to ``storageIntegrationId`` on configure.
    var legacyStorageIntegrationId: String? {
        if case .odp(let odp, _, _) = self { return "odp-\(odp.apiKey)" }
        return nil
    }
}

extension FlushingMode {
    /// Checks a periodic interval (<doc:Behaviour#E2>, <doc:Behaviour#P7>): not finite, or not
    /// above 0, would flush in a tight loop or never.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`.
    func validate() throws {
        if case .periodic(let seconds) = self, !(seconds.isFinite && seconds > 0) {
            throw SegmentsError(
                .invalidConfiguration, "The periodic flushing interval must be a finite number of seconds above 0, not \(seconds)")
        }
    }
}
