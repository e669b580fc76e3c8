import Foundation
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct TransportValueTests {
    @Test func headersAreLookedUpCaseInsensitively() {
        let headers: SegmentsHTTPHeaders = ["Content-Type": "application/json", "retry-after": "5"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["Retry-After"] == "5")
        #expect(headers["Accept"] == nil)
    }

    @Test func settingAHeaderReplacesEveryFieldOfThatNameInPlace() {
        var headers: SegmentsHTTPHeaders = ["A": "1", "x-tag": "a", "B": "2", "X-Tag": "b"]
        headers["X-TAG"] = "c"
        #expect(Array(headers).map(\.name) == ["A", "X-TAG", "B"])
        #expect(headers.values(for: "x-tag") == ["c"])
        headers["x-tag"] = nil
        #expect(headers.count == 2)
        headers.add(name: "Set-Cookie", value: "a")
        headers.add(name: "set-cookie", value: "b")
        #expect(headers.values(for: "SET-COOKIE") == ["a", "b"])
    }

    @Test func headerEqualityIgnoresNameCase() {
        let lower: SegmentsHTTPHeaders = ["accept": "application/json"]
        let upper: SegmentsHTTPHeaders = ["Accept": "application/json"]
        #expect(lower == upper)
        #expect(lower.hashValue == upper.hashValue)
        #expect(lower != ["Accept": "text/plain"])
    }

    @Test func p4_headerDescriptionHidesAuthorization() {
        let headers: SegmentsHTTPHeaders = ["authorization": "Token secret-key", "Accept": "application/json"]
        #expect(!headers.description.contains("secret-key"))
        #expect(headers.description.contains("<redacted>"))
        #expect(headers.description.contains("Accept: application/json"))
    }

    @Test func p4_authorizationDescriptionHidesTheCredential() {
        #expect(BloomreachAuthorization.token("secret").description == "token(<redacted>)")
        #expect(BloomreachAuthorization.bearer("secret").description == "bearer(<redacted>)")
        #expect(BloomreachAuthorization.none.description == "none")
    }

    @Test func requestExposesPathAndQueryDecodedAndEncoded() throws {
        let url = try #require(URL(string: "https://h.example/a/b%2Fc?cookie=x%26y&k=v"))
        let request = SegmentsHTTPRequest(url: url)
        #expect(request.method == .get)
        #expect(request.percentEncodedPath == "/a/b%2Fc")
        #expect(request.path == "/a/b/c")
        #expect(request.queryValue("cookie") == "x&y")
        #expect(request.queryValue("missing") == nil)
    }

    @Test func responseSuccessIsExactly2xx() {
        #expect(SegmentsHTTPResponse(status: 200).isSuccess)
        #expect(SegmentsHTTPResponse(status: 299).isSuccess)
        #expect(!SegmentsHTTPResponse(status: 199).isSuccess)
        #expect(!SegmentsHTTPResponse(status: 300).isSuccess)
        #expect(SegmentsHTTPResponse(status: 200, text: "hi").body == Data("hi".utf8))
    }
}
