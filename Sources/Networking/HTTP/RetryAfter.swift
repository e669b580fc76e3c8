import Foundation

/// Parses the `Retry-After` header (RFC 9110 §10.2.3) into seconds to wait.
package enum RetryAfter {
    /// The longest wait a header can ask for: one day. Longer values (a 400-digit number parses
    /// as infinity) count as this, so the result is always finite; the engine caps it further.
    package static let maximumSeconds: TimeInterval = 86_400

    /// The wait `value` asks for, measured from `now`, or `nil` when it is neither delta-seconds
    /// nor an HTTP-date. A date in the past means no wait (`0`). The result is always finite,
    /// within `0...maximumSeconds`.
    ///
    /// Accepts delta-seconds (`120`) and the three HTTP-date forms: IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
    /// (`Sun Nov  6 08:49:37 1994`).
    package static func seconds(from value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Leading zeros are allowed; anything past a dozen significant digits is over the cap.
            let significant = trimmed.drop { $0 == "0" }
            guard significant.count <= 12, let seconds = TimeInterval(significant.isEmpty ? "0" : String(significant))
            else { return maximumSeconds }
            return min(seconds, maximumSeconds)
        }
        // An HTTP-date is at most 29 characters (RFC 850 with a long weekday: 30); don't let a
        // huge header reach the date formatter.
        guard trimmed.utf8.count <= 64, let date = httpDate(trimmed) else { return nil }
        let wait = date.timeIntervalSince(now)
        guard wait.isFinite else { return nil }
        return min(max(0, wait), maximumSeconds)
    }

    private static let dateFormats = [
        "EEE',' dd MMM yyyy HH':'mm':'ss 'GMT'",
        "EEEE',' dd'-'MMM'-'yy HH':'mm':'ss 'GMT'",
        "EEE MMM d HH':'mm':'ss yyyy",
    ]

    private static func httpDate(_ text: String) -> Date? {
        // asctime pads single-digit days with a space ("Nov  6"); collapse runs of spaces.
        let normalized = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        // DateFormatter is not Sendable, so each parse makes its own; Retry-After is rare.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.isLenient = false
        for format in dateFormats {
            formatter.dateFormat = format
            if let date = formatter.date(from: normalized) { return date }
        }
        return nil
    }
}
