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
        guard trimmed.utf8.count <= 64, let date = httpDate(trimmed, now: now) else { return nil }
        let wait = date.timeIntervalSince(now)
        guard wait.isFinite else { return nil }
        return min(max(0, wait), maximumSeconds)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays: Set<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays: Set<String> = [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    ]

    /// An HTTP-date in one of its three forms, parsed by hand: `DateFormatter` costs a formatter
    /// per call (it is not `Sendable`) and, on Linux, leaks a character set on every parse.
    private static func httpDate(_ text: String, now: Date) -> Date? {
        // asctime pads single-digit days with a space ("Nov  6"); collapse runs of spaces.
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map { $0.lowercased() }
        switch words.count {
        case 6 where words[0].hasSuffix(",") && shortDays.contains(String(words[0].dropLast())) && words[5] == "gmt":
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard words[1].count == 2, words[3].count == 4, let day = Int(digits: words[1]),
                let month = months.firstIndex(of: words[2]), let year = Int(digits: words[3])
            else { return nil }
            return date(year: year, month: month + 1, day: day, time: words[4])
        case 4 where words[0].hasSuffix(",") && longDays.contains(String(words[0].dropLast())) && words[3] == "gmt":
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[0].count == 2, parts[2].count == 2, let day = Int(digits: parts[0]),
                let month = months.firstIndex(of: parts[1]), let shortYear = Int(digits: parts[2])
            else { return nil }
            return date(year: fullYear(shortYear, now: now), month: month + 1, day: day, time: words[2])
        case 5 where shortDays.contains(words[0]):
            // asctime: Sun Nov  6 08:49:37 1994
            guard (1...2).contains(words[2].count), words[4].count == 4, let month = months.firstIndex(of: words[1]),
                let day = Int(digits: words[2]), let year = Int(digits: words[4])
            else { return nil }
            return date(year: year, month: month + 1, day: day, time: words[3])
        default:
            return nil
        }
    }

    /// RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is the most recent past
    /// year with those digits.
    private static func fullYear(_ shortYear: Int, now: Date) -> Int {
        let current = Int(now.timeIntervalSince1970 / 31_556_952) + 1970  // mean Gregorian year
        var year = current - current % 100 + shortYear
        if year > current + 50 { year -= 100 }
        return year
    }

    /// The UTC instant of a civil date and an `hh:mm:ss` time, or `nil` when either is invalid.
    private static func date(year: Int, month: Int, day: Int, time: String) -> Date? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }), let hour = Int(digits: parts[0]),
            let minute = Int(digits: parts[1]), let second = Int(digits: parts[2]),
            hour < 24, minute < 60, second < 60, (1...12).contains(month), day >= 1,
            day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar, counted in 400-year
    /// eras of 146,097 days starting each 1 March, so the leap day falls at the end of a year.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int {
    /// The value of `text` when it is only ASCII digits (no sign, no space), else `nil`.
    fileprivate init?(digits text: String) {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        self.init(text)
    }
}
