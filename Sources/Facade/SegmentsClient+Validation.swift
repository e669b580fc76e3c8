import Foundation
import SegmentsData

extension SegmentsClient.Options {
    /// Checks every duration the options carry (SPEC P7): the debounce and max wait, the cache
    /// time, and both backoffs (automatic reloads and uploads), whose first delay must be more than
    /// 0 — a zero backoff would retry in a tight loop.
    ///
    /// ``SegmentsClient/configure(_:)`` calls it; calling it earlier lets an app fail early.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`.
    public func validate() throws {
        try timings.debounce.validate()
        try timings.cache.validate()
        try timings.retry.validate()
        try uploadRetry.validate()
    }
}
