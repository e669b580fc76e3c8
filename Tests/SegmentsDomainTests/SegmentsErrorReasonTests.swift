import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// A failed fetch's reason as a value (see Behaviour O4, issue 14): given explicitly, or implied by the code.
@Suite(Hang.timeLimit(minutes: 2)) struct SegmentsErrorReasonTests {
    @Test(arguments: [
        (SegmentsError(.network, "offline"), "network error"),
        (SegmentsError(.timeout, "slow"), "timeout"),
        (SegmentsError(.httpStatus, "down", httpStatus: 503), "503"),
        (SegmentsError(.unauthorized, "refused", httpStatus: 401), "401"),
        (SegmentsError(.invalidResponse, "garbled"), "decode error"),
        (SegmentsError(.invalidIdentifier, "who?"), "invalid identifier"),
        (SegmentsError(.notEnabled, "off"), "not enabled"),
        (SegmentsError(.storage, "disk"), "storage"),
        (SegmentsError(.invalidResponse, "boom", reason: SegmentsError.Reason(rawValue: "DataFetchingException")),
         "DataFetchingException"),
    ])
    func o4_everyErrorHasAReadableReason(error: SegmentsError, reason: String) {
        #expect(error.reason.rawValue == reason)
        #expect(error.reason.description == reason)
    }

    @Test func o4_reasonsCompareAsValues() {
        #expect(SegmentsError(.httpStatus, "x", httpStatus: 429).reason == .httpStatus(429))
        #expect(SegmentsError(.invalidResponse, "x").reason == .decodeError)
        #expect(SegmentsError.wrapping(SegmentsError(.network, "x")).reason == .networkError)
    }

    /// Codes are values: a code a later version adds reaches an app's `switch` as its `default`
    /// and counts as permanent here; the shared `.stopped` / `.notConfigured` errors carry their codes.
    @Test func codesAreExtensibleAndTheSharedErrorsCarryTheirCodes() {
        let future = SegmentsError(SegmentsError.Code(rawValue: "quotaExceeded"), "over quota")
        #expect(!future.isTransient)
        #expect(future.reason.rawValue == "quotaExceeded")
        #expect(future.code.description == "quotaExceeded")
        #expect(SegmentsError.Code(rawValue: "network") == .network)
        let handled: String = switch future.code {   // an app's switch: a later code lands in `default`
        case .network, .timeout: "retry"
        case .unauthorized: "sign in"
        default: "report"
        }
        #expect(handled == "report")
        #expect(SegmentsError(.network, "down").isTransient)
        #expect(SegmentsError.stopped.code == .stopped && SegmentsError.stopped.message == "the integration was stopped")
        #expect(SegmentsError.notConfigured.code == .notConfigured)
        #expect(SegmentsError.notConfigured.message == "the client is not configured")
    }
}
