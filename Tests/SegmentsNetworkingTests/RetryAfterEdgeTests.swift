import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// `Retry-After` at its edges (see Behaviour T7): the two-digit year of an RFC 850 date, and the
/// length past which a value is no date at all.
@Suite(Hang.timeLimit(minutes: 1)) struct RetryAfterEdgeTests {
    /// 2026-05-28: the current year by the parser's mean Gregorian year is 2026.
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    /// RFC 9110: a two-digit year more than 50 years ahead is the most recent past year with
    /// those digits; 50 years ahead is still ahead.
    @Test func t7_aTwoDigitYearMoreThanFiftyYearsAheadIsInThePast() {
        #expect(RetryAfter.seconds(from: "Sunday, 06-Nov-77 08:49:37 GMT", now: Self.now) == 0)
        #expect(RetryAfter.seconds(from: "Sunday, 06-Nov-76 08:49:37 GMT", now: Self.now) == RetryAfter.maximumSeconds)
    }

    /// An HTTP-date is at most 30 characters: a longer value (here padded with spaces inside) is
    /// no date from 65 characters on, however it would parse.
    @Test func t7_aDateValueOfSixtyFiveCharactersIsNoDate() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        func padded(to length: Int) -> String {
            date.replacingOccurrences(of: "GMT", with: String(repeating: " ", count: length - date.count) + "GMT")
        }
        #expect(padded(to: 64).count == 64)
        #expect(RetryAfter.seconds(from: padded(to: 64), now: Self.now) == 0)
        #expect(RetryAfter.seconds(from: padded(to: 65), now: Self.now) == nil)
    }

    /// A time of day runs to 23:59:59: hour 24 makes the value no date.
    @Test func t7_hourTwentyFourIsNoDate() {
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 23:59:59 GMT", now: Self.now) == 0)
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 24:00:00 GMT", now: Self.now) == nil)
    }

    /// A month has the days it has: 31 January is a date, 32 January is none.
    @Test func t7_theThirtySecondOfAMonthIsNoDate() {
        #expect(RetryAfter.seconds(from: "Mon, 31 Jan 1994 08:49:37 GMT", now: Self.now) == 0)
        #expect(RetryAfter.seconds(from: "Tue, 32 Jan 1994 08:49:37 GMT", now: Self.now) == nil)
    }
}
