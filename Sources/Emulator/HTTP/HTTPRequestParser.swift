import Foundation

/// Why bytes are not an acceptable request; each maps to the 4xx/5xx status the server answers
/// with before it closes the connection.
package enum HTTPParseFailure: Error, Hashable, Sendable {
    /// Not HTTP: a broken request line, header line or `Content-Length` (400).
    case malformed(String)
    /// The request line and headers exceed the header limit (431).
    case headersTooLarge
    /// `Content-Length` exceeds the body limit (413).
    case bodyTooLarge
    /// A `Transfer-Encoding` body (chunked); only `Content-Length` bodies are accepted (411).
    case lengthRequired
    /// An HTTP version other than 1.0 and 1.1 (505).
    case unsupportedVersion

    /// The status code answered for this failure.
    package var status: Int {
        switch self {
        case .malformed: return 400
        case .headersTooLarge: return 431
        case .bodyTooLarge: return 413
        case .lengthRequired: return 411
        case .unsupportedVersion: return 505
        }
    }
}

/// A pure, incremental HTTP/1.x request parser: bytes in, requests or a failure out.
///
/// Feed it whatever `recv` returned with ``append(_:)`` and drain complete requests with
/// ``next()``; split input and pipelined requests both work because unconsumed bytes stay
/// buffered. It does no I/O and holds no references, so it can be unit-tested and fuzzed on
/// its own. After a failure it stays failed: the connection is not resynchronisable.
package struct HTTPRequestParser: Sendable {
    /// What ``next()`` found.
    package enum Outcome: Hashable, Sendable {
        /// One complete request; its bytes are consumed.
        case request(ParsedHTTPRequest)
        /// The buffered bytes are a prefix of a request (possibly empty).
        case needMoreData
        /// The bytes are not an acceptable request; the parser stays in this state.
        case failure(HTTPParseFailure)
    }

    private struct Head: Sendable {
        var method: String
        var target: String
        var version: String
        var fields: [ParsedHTTPRequest.Field]
        var bodyLength: Int
        /// `Expect: 100-continue` that has not been answered yet.
        var awaitsContinue: Bool
    }

    /// The largest accepted request line plus headers, in bytes.
    package let maxHeaderBytes: Int
    /// The largest accepted `Content-Length`.
    package let maxBodyBytes: Int

    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes after `start` already searched for the end of the head, so that a head arriving in
    /// tiny pieces is scanned once rather than once per piece.
    private var scanned = 0
    private var pendingHead: Head?
    private var failed: HTTPParseFailure?

    /// A parser with the given limits.
    package init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// The bytes received but not yet returned as part of a request.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Appends received bytes.
    package mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0 && start >= buffer.count / 2 {
            // Drop consumed bytes once they are half the buffer: amortised O(1) per byte.
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// `true` once per request whose head asked `Expect: 100-continue` and whose body has not fully
    /// arrived: the caller then writes `HTTP/1.1 100 Continue` so the client sends the body at once.
    /// A body over the limit fails in ``next()`` before this is ever `true`.
    package mutating func takeContinueRequest() -> Bool {
        guard pendingHead?.awaitsContinue == true else { return false }
        pendingHead?.awaitsContinue = false
        return true
    }

    /// Takes the next complete request out of the buffer, if there is one.
    package mutating func next() -> Outcome {
        if let failed { return .failure(failed) }
        do {
            if pendingHead == nil {
                guard let head = try parseHead() else { return .needMoreData }
                pendingHead = head
            }
            guard let head = pendingHead, bufferedByteCount >= head.bodyLength else { return .needMoreData }
            let body = Array(buffer[start..<(start + head.bodyLength)])
            start += head.bodyLength
            pendingHead = nil
            return .request(ParsedHTTPRequest(
                method: head.method, target: head.target, version: head.version, fields: head.fields, body: body
            ))
        } catch let failure as HTTPParseFailure {
            failed = failure
            return .failure(failure)
        } catch {
            failed = .malformed("\(error)")
            return .failure(.malformed("\(error)"))
        }
    }

    /// Parses the request line and headers once they are complete; `nil` while they are not.
    private mutating func parseHead() throws -> Head? {
        // RFC 9112 §2.2: ignore empty lines (CRLF or a bare LF, in any mix) before the request
        // line. One loop for both, so the outcome does not depend on how reads split the bytes:
        // two loops skipped "\n\r\n" whole only when the "\n" came in an earlier read (found by
        // fuzzing, Docs/Reliability.md).
        while bufferedByteCount >= 1 {
            if buffer[start] == 10 {
                start += 1
            } else if buffer[start] == 13 && bufferedByteCount >= 2 && buffer[start + 1] == 10 {
                start += 2
            } else {
                break
            }
            scanned = 0
        }
        guard let end = headEnd() else {
            // Only once a terminator within the limit would have been seen is the head too long.
            if bufferedByteCount >= maxHeaderBytes + 4 { throw HTTPParseFailure.headersTooLarge }
            return nil
        }
        if end - start > maxHeaderBytes { throw HTTPParseFailure.headersTooLarge }
        guard let text = String(bytes: buffer[start..<end], encoding: .utf8) else {
            throw HTTPParseFailure.malformed("head is not UTF-8")
        }
        start = end + 4
        scanned = 0
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, Self.isToken(parts[0]), !parts[1].isEmpty,
              !parts[1].contains(where: { $0.isWhitespace }) else {
            throw HTTPParseFailure.malformed("bad request line")
        }
        guard parts[2].hasPrefix("HTTP/"), parts[2].count == 8 else {
            throw HTTPParseFailure.malformed("bad HTTP version")
        }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else { throw HTTPParseFailure.unsupportedVersion }
        let fields = try lines.map(Self.parseField)
        let bodyLength = try Self.bodyLength(fields)
        if bodyLength > maxBodyBytes { throw HTTPParseFailure.bodyTooLarge }
        let expect = fields.first { $0.name.caseInsensitiveCompare("Expect") == .orderedSame }?.value
        let awaitsContinue = parts[2] == "HTTP/1.1" && expect?.lowercased() == "100-continue" && bodyLength > 0
        return Head(method: parts[0], target: parts[1], version: parts[2], fields: fields, bodyLength: bodyLength,
                    awaitsContinue: awaitsContinue)
    }

    /// The index of the `\r\n\r\n` that ends the head, searching no further than the limit allows.
    private mutating func headEnd() -> Int? {
        let limit = min(buffer.count, start + maxHeaderBytes + 4)
        var index = start + scanned
        while index + 3 < limit {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        scanned = index - start
        return nil
    }

    private static func parseField(_ line: String) throws -> ParsedHTTPRequest.Field {
        guard let colon = line.firstIndex(of: ":") else { throw HTTPParseFailure.malformed("header without colon") }
        let name = String(line[..<colon])
        guard isToken(name) else { throw HTTPParseFailure.malformed("bad header name") }
        let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw HTTPParseFailure.malformed("bad header value")
        }
        return ParsedHTTPRequest.Field(name: name, value: value)
    }

    private static func bodyLength(_ fields: [ParsedHTTPRequest.Field]) throws -> Int {
        if fields.contains(where: { $0.name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame }) {
            throw HTTPParseFailure.lengthRequired
        }
        let lengths = fields.filter { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }
        guard let first = lengths.first else { return 0 }
        guard lengths.allSatisfy({ $0.value == first.value }), !first.value.isEmpty,
              first.value.utf8.count <= 18, first.value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let length = Int(first.value) else {
            throw HTTPParseFailure.malformed("bad Content-Length")
        }
        return length
    }

    /// RFC 9110 `token`: visible ASCII without separators.
    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            byte > 32 && byte < 127 && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
        }
    }
}
