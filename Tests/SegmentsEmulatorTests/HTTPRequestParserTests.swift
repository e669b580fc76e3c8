import Foundation
import SegmentsEmulator
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct HTTPRequestParserTests {
    private let post = "POST /track/v2/projects/t/customers/events HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}"

    private func parse(_ text: String, parser: inout HTTPRequestParser) -> HTTPRequestParser.Outcome {
        parser.append(Array(text.utf8))
        return parser.next()
    }

    @Test func parsesRequestLineHeadersAndBody() throws {
        var parser = HTTPRequestParser()
        guard case .request(let request) = parse(post, parser: &parser) else {
            Issue.record("no request")
            return
        }
        #expect(request.method == "POST")
        #expect(request.target == "/track/v2/projects/t/customers/events")
        #expect(request.version == "HTTP/1.1")
        #expect(request.header("content-length") == "7")
        #expect(request.header("HOST") == "x")
        #expect(request.body == Array("{\"a\":1}".utf8))
        #expect(request.keepsAlive)
        #expect(parser.next() == .needMoreData)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func everySplitPointGivesTheSameRequest() throws {
        var whole = HTTPRequestParser()
        let expected = parse(post, parser: &whole)
        let bytes = Array(post.utf8)
        for split in 1..<bytes.count {
            var parser = HTTPRequestParser()
            parser.append(bytes[..<split])
            let first = parser.next()
            if first != .needMoreData {
                Issue.record("split at \(split) gave \(first)")
            }
            parser.append(bytes[split...])
            #expect(parser.next() == expected)
        }
    }

    @Test func byteByByteInputCompletesOnTheLastByte() {
        var parser = HTTPRequestParser()
        let bytes = Array(post.utf8)
        for (index, byte) in bytes.enumerated() {
            parser.append([byte])
            let outcome = parser.next()
            if index < bytes.count - 1 {
                #expect(outcome == .needMoreData)
            } else if case .request(let request) = outcome {
                #expect(request.body.count == 7)
            } else {
                Issue.record("last byte gave \(outcome)")
            }
        }
    }

    @Test func pipelinedRequestsComeOutInOrder() {
        var parser = HTTPRequestParser()
        let first = "GET /a?cookie=1 HTTP/1.1\r\nHost: x\r\n\r\n"
        let third = "GET /c HTTP/1.0\r\n\r\n"
        parser.append(Array((first + post + third).utf8))
        var targets: [String] = []
        while case .request(let request) = parser.next() { targets.append(request.target) }
        #expect(targets == ["/a?cookie=1", "/track/v2/projects/t/customers/events", "/c"])
        #expect(parser.next() == .needMoreData)
    }

    @Test func leadingEmptyLinesAreIgnored() {
        var parser = HTTPRequestParser()
        guard case .request(let request) = parse("\r\n\r\nGET / HTTP/1.1\r\n\r\n", parser: &parser) else {
            Issue.record("no request")
            return
        }
        #expect(request.target == "/")
    }

    /// Found by fuzzing: "\n\r\n" before a request was skipped when the "\n" arrived in an earlier
    /// read, but made the request malformed when all bytes arrived at once.
    @Test(arguments: ["\n\r\n", "\r\n\n\r\n", "\n\n", "\n\r\n\n"])
    func mixedLeadingEmptyLinesAreIgnoredWhateverTheSplit(prefix: String) {
        let bytes = Array((prefix + "GET / HTTP/1.1\r\n\r\n").utf8)
        for split in 0...bytes.count {
            var parser = HTTPRequestParser()
            parser.append(bytes[..<split])
            if split < bytes.count {
                #expect(parser.next() == .needMoreData)
                parser.append(bytes[split...])
            }
            guard case .request(let request) = parser.next() else {
                Issue.record("split at \(split) of \(prefix.debugDescription): no request")
                continue
            }
            #expect(request.target == "/")
            #expect(parser.bufferedByteCount == 0)
        }
    }

    @Test func keepAliveFollowsVersionAndConnectionHeader() {
        func keepsAlive(_ head: String) -> Bool? {
            var parser = HTTPRequestParser()
            guard case .request(let request) = parse(head + "\r\n", parser: &parser) else { return nil }
            return request.keepsAlive
        }
        #expect(keepsAlive("GET / HTTP/1.1\r\n") == true)
        #expect(keepsAlive("GET / HTTP/1.1\r\nConnection: close\r\n") == false)
        #expect(keepsAlive("GET / HTTP/1.1\r\nConnection: Upgrade, Close\r\n") == false)
        #expect(keepsAlive("GET / HTTP/1.0\r\n") == false)
        #expect(keepsAlive("GET / HTTP/1.0\r\nConnection: keep-alive\r\n") == true)
    }

    @Test(arguments: [
        ("GARBAGE\r\n\r\n", HTTPParseFailure.malformed("bad request line")),
        ("GET /\r\n\r\n", .malformed("bad request line")),
        ("GET / HTTP/1.1 extra\r\n\r\n", .malformed("bad request line")),
        ("G(T / HTTP/1.1\r\n\r\n", .malformed("bad request line")),
        ("GET / HTTX/1.1\r\n\r\n", .malformed("bad HTTP version")),
        ("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", .malformed("header without colon")),
        ("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", .malformed("bad header name")),
        ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", .malformed("bad Content-Length")),
        ("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", .malformed("bad Content-Length")),
        ("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .malformed("bad Content-Length")),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", .lengthRequired),
        ("POST / HTTP/1.1\r\nContent-Length: 99\r\n\r\n", .bodyTooLarge),
    ])
    func rejectsBadHeads(text: String, failure: HTTPParseFailure) {
        var parser = HTTPRequestParser(maxHeaderBytes: 1024, maxBodyBytes: 10)
        #expect(parse(text, parser: &parser) == .failure(failure))
        // A failed parser stays failed, whatever follows.
        parser.append(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(parser.next() == .failure(failure))
    }

    @Test func failureStatusCodes() {
        #expect(HTTPParseFailure.malformed("x").status == 400)
        #expect(HTTPParseFailure.headersTooLarge.status == 431)
        #expect(HTTPParseFailure.bodyTooLarge.status == 413)
        #expect(HTTPParseFailure.lengthRequired.status == 411)
        #expect(HTTPParseFailure.unsupportedVersion.status == 505)
    }

    @Test func headerLimitIsExactAndAppliesBeforeTheHeadEnds() {
        let line = "GET / HTTP/1.1\r\nX: "
        func head(ofSize size: Int) -> String {
            line + String(repeating: "a", count: size - line.utf8.count)
        }
        var fits = HTTPRequestParser(maxHeaderBytes: 100)
        #expect(parse(head(ofSize: 100) + "\r\n\r\n", parser: &fits) != .failure(.headersTooLarge))
        var tooLarge = HTTPRequestParser(maxHeaderBytes: 100)
        #expect(parse(head(ofSize: 101) + "\r\n\r\n", parser: &tooLarge) == .failure(.headersTooLarge))
        // An endless head is refused once the limit is passed, without waiting for its end.
        var endless = HTTPRequestParser(maxHeaderBytes: 100)
        #expect(parse(head(ofSize: 99), parser: &endless) == .needMoreData)
        #expect(parse(String(repeating: "a", count: 10), parser: &endless) == .failure(.headersTooLarge))
    }

    @Test func bodyAtTheLimitIsAccepted() {
        var parser = HTTPRequestParser(maxBodyBytes: 4)
        guard case .request(let request) = parse("POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", parser: &parser) else {
            Issue.record("no request")
            return
        }
        #expect(request.body == Array("abcd".utf8))
    }

    @Test func expectContinueIsReportedOnceWhileTheBodyIsMissing() {
        var parser = HTTPRequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        let beforeParsing = parser.takeContinueRequest()  // the head is not parsed before next()
        #expect(!beforeParsing)
        #expect(parser.next() == .needMoreData)
        let first = parser.takeContinueRequest()
        let second = parser.takeContinueRequest()
        #expect(first && !second)
        parser.append(Array("{}".utf8))
        guard case .request(let request) = parser.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.body == Array("{}".utf8))
        let afterBody = parser.takeContinueRequest()
        #expect(!afterBody)
    }

    @Test func garbageBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var parser = HTTPRequestParser(maxHeaderBytes: 256, maxBodyBytes: 256)
            for _ in 0..<8 {
                let chunk = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                parser.append(chunk)
                _ = parser.next()
            }
        }
    }
}
