import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// An error from outside the SDK whose text carries what must not be shown (see Behaviour P4): a
/// URL with the customer's cookie and a provider's token.
private struct ForeignError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    var description: String { "GET https://api.example.com/segments?cookie=COOKIE-123 failed with jwt-SECRET" }
    var debugDescription: String { description }
}

/// The same, declaring a domain and a code as Foundation errors do.
private struct DomainError: Error, CustomNSError, CustomStringConvertible {
    static var errorDomain: String { "com.example.tokens" }
    var errorCode: Int { 7 }
    var errorUserInfo: [String: Any] { ["NSErrorFailingURLStringKey": "https://x/?cookie=COOKIE-123"] }
    var description: String { "token jwt-SECRET refused" }
}

/// Behaviour P4 for ``SegmentsError``: a wrapped foreign error's text never reaches its message,
/// its description, its debug description, `dump` or `Mirror`.
@Suite(Hang.timeLimit(minutes: 1)) struct ErrorRedactionTests {
    static func renderings(of error: SegmentsError) -> [String] {
        var texts = [String(describing: error), String(reflecting: error), error.message, "\(error)"]
        var dumped = ""
        dump(error, to: &dumped)
        texts.append(dumped)
        func walk(_ value: Any, depth: Int) {
            guard depth < 8 else { return }
            for child in Mirror(reflecting: value).children {
                texts.append(String(describing: child.value))
                texts.append(String(reflecting: child.value))
                walk(child.value, depth: depth + 1)
            }
        }
        walk(error, depth: 0)
        return texts
    }

    static let leaks = ["COOKIE-123", "jwt-SECRET"]

    @Test func p4_wrappingAForeignErrorKeepsItsTextOutOfTheMessage() {
        let wrapped = SegmentsError.wrapping(ForeignError())
        #expect(wrapped.message == "ForeignError")
        #expect(SegmentsError.wrapping(DomainError()).message == "DomainError (com.example.tokens 7)")
        #expect(wrapped.underlying is ForeignError, "the error itself stays available to the app")
    }

    @Test(arguments: [
        SegmentsError.wrapping(ForeignError()),
        SegmentsError.wrapping(DomainError(), as: .unauthorized),
        SegmentsError(.network, "The request failed", underlying: ForeignError()),
        SegmentsError(.linkFailed, "link failed", underlying: SegmentsError(.network, "inner", underlying: DomainError())),
    ])
    func p4_noRenderingOfAnErrorShowsTheWrappedErrorsText(error: SegmentsError) {
        for text in Self.renderings(of: error) {
            for leak in Self.leaks {
                #expect(!text.contains(leak), "\(leak) shown in: \(text)")
            }
        }
    }

    @Test func p4_aDumpStillShowsTheCodeMessageStatusAndTheUnderlyingType() {
        let error = SegmentsError(
            .linkFailed, "link failed", httpStatus: 503,
            underlying: SegmentsError(.network, "inner", underlying: DomainError()))
        var dumped = ""
        dump(error, to: &dumped)
        #expect(dumped.contains("linkFailed"))
        #expect(dumped.contains("link failed"))
        #expect(dumped.contains("503"))
        #expect(dumped.contains("inner"), "an underlying SegmentsError is shown, redacted the same way")
        #expect(dumped.contains("DomainError (com.example.tokens 7)"))
        #expect(String(reflecting: error).contains("underlying: SegmentsError(code: network"))
    }
}
