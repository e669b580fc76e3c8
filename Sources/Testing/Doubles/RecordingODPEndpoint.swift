import Foundation
import SegmentsDomain
import SegmentsNetworking

/// A stand-in for the Optimizely Data Platform GraphQL endpoint, served by a ``RecordingTransport``:
/// it answers as scripted and records every query, so tests run the real ODP adapter
/// (`AudienceSegmentsClient(odp:…)`, `.odp` backend) without a network. It reads each request's
/// identifier field and variables (as the "ODP audiences query" of the wire format in
/// `Docs/Behaviour.md` describes them) and answers per user.
///
/// ```swift
/// let odp = RecordingODPEndpoint()
/// odp.qualify(["has_purchased"], forUserId: "user123")       // known user, these audiences qualified
/// odp.enqueue(.status(503))                                    // the next request fails once
/// odp.enqueue(.graphQLError(classification: "DataFetchingException"))
/// let transport = RecordingTransport()
/// transport.serveODP(odp)                                      // answers POST /v3/graphql
/// // … after the code under test ran:
/// #expect(odp.queries.map(\.userId) == ["user123"])
/// ```
///
/// - A known user (one given to ``qualify(_:forUserId:field:)``) gets one edge per audience asked
///   about, in the order asked: `qualified` for its audiences, `not_qualified` for the others.
/// - Another user gets ``unknownUserAnswer`` (the invalid-identifier error ODP answers today, by default).
/// - One-off answers from ``enqueue(_:)`` come first, oldest first.
/// - With ``acceptedAPIKeys`` set, a request whose `x-api-key` is not among them gets a `401`.
/// - A body that is not the adapter's GraphQL request gets a `400` with a `ValidationError`.
public final class RecordingODPEndpoint: Sendable {
    /// The path the endpoint serves: `/v3/graphql`.
    public static let path = "/v3/graphql"

    /// One request as the endpoint read it.
    public struct Query: Hashable, Sendable {
        /// The identifier field of `customer(…)` in the query text, e.g. `fs_user_id`.
        public let field: AudienceIdentifier.Field
        /// `variables.userId`.
        public let userId: String
        /// `variables.audiences`, in request order.
        public let audiences: [String]
        /// The `x-api-key` header, if any.
        public let apiKey: String?

        /// A query, e.g. to compare with ``RecordingODPEndpoint/queries``.
        public init(field: AudienceIdentifier.Field, userId: String, audiences: [String], apiKey: String?) {
            self.field = field
            self.userId = userId
            self.audiences = audiences
            self.apiKey = apiKey
        }

        /// The identifier the query is about.
        public var identifier: AudienceIdentifier { AudienceIdentifier(field: field, value: userId) }
    }

    /// What a user the endpoint does not know gets.
    public enum UnknownUserAnswer: Hashable, Sendable {
        /// HTTP 200 with an error of code `INVALID_IDENTIFIER_EXCEPTION` (classification
        /// `DataFetchingException`), as ODP answers today. The default.
        case invalidIdentifier
        /// HTTP 200 with an error of classification `InvalidIdentifierException`, the legacy form.
        case legacyInvalidIdentifier
        /// HTTP 200 with `"customer": null` and no error.
        case nullCustomer
        /// HTTP 200 with every audience asked about `not_qualified`.
        case notQualified
    }

    /// A one-off answer for the next request.
    public enum Scripted: Sendable {
        /// This status, these headers and an empty body, e.g. `.status(503, headers: ["Retry-After": "2"])`.
        case status(Int, headers: SegmentsHTTPHeaders = [:])
        /// HTTP 200 with one GraphQL error with these `extensions` and `"customer": null`.
        case graphQLError(code: String? = nil, classification: String? = nil, message: String = "fake ODP error")
        /// This body as JSON (malformed on purpose, say) with `status`.
        case body(String, status: Int = 200)
        /// Throw `error`, as a transport does when no answer arrived.
        case failure(any Error)
    }

    private struct State: Sendable {
        var qualified: [AudienceIdentifier: Set<String>] = [:]
        var qualifiedAnyField: [String: Set<String>] = [:]
        var unknownUserAnswer = UnknownUserAnswer.invalidIdentifier
        var acceptedAPIKeys: Set<String>?
        var scripted: [Scripted] = []
        var queries: [Query] = []
    }

    private let state = Locked(State())

    /// An endpoint that knows no user and accepts any API key.
    public init() {}

    /// Makes `userId` known, qualified for `segments` (the other audiences asked about answer
    /// `not_qualified`); only when asked about as `field`, or as any field when `nil`.
    public func qualify(_ segments: [String], forUserId userId: String, field: AudienceIdentifier.Field? = nil) {
        state.withLock { state in
            if let field {
                state.qualified[AudienceIdentifier(field: field, value: userId)] = Set(segments)
            } else {
                state.qualifiedAnyField[userId] = Set(segments)
            }
        }
    }

    /// What users the endpoint does not know get (``UnknownUserAnswer/invalidIdentifier`` by default).
    public var unknownUserAnswer: UnknownUserAnswer {
        get { state.withLock { $0.unknownUserAnswer } }
        set { state.withLock { $0.unknownUserAnswer = newValue } }
    }

    /// The keys accepted in `x-api-key`; `nil` (the default) accepts any.
    public var acceptedAPIKeys: Set<String>? {
        get { state.withLock { $0.acceptedAPIKeys } }
        set { state.withLock { $0.acceptedAPIKeys = newValue } }
    }

    /// Answers the next request with `answer`, once; several are used oldest first.
    public func enqueue(_ answer: Scripted) {
        state.withLock { $0.scripted.append(answer) }
    }

    /// Every request the endpoint could read, oldest first (also those answered by a script).
    public var queries: [Query] { state.withLock { $0.queries } }

    /// The endpoint as a ``RecordingTransport`` answer.
    public var answer: RecordingTransport.Answer {
        .handler { [self] request in try self.respond(to: request) }
    }

    /// The endpoint's answer to `request`.
    public func respond(to request: SegmentsHTTPRequest) throws -> SegmentsHTTPResponse {
        let query = Self.query(of: request)
        enum Step { case scripted(Scripted), unauthorized, invalid, known(Set<String>), unknown(UnknownUserAnswer) }
        let step = state.withLock { state -> Step in
            if let query { state.queries.append(query) }
            if !state.scripted.isEmpty { return .scripted(state.scripted.removeFirst()) }
            if let keys = state.acceptedAPIKeys, !keys.contains(request.headers["x-api-key"] ?? "") { return .unauthorized }
            guard let query else { return .invalid }
            if let segments = state.qualified[query.identifier] ?? state.qualifiedAnyField[query.userId] {
                return .known(segments)
            }
            return .unknown(state.unknownUserAnswer)
        }
        switch step {
        case .scripted(.status(let status, let headers)):
            return SegmentsHTTPResponse(status: status, headers: headers)
        case .scripted(.graphQLError(let code, let classification, let message)):
            return Self.json(Self.error(code: code, classification: classification, message: message))
        case .scripted(.body(let body, let status)):
            return SegmentsHTTPResponse(status: status, headers: ["Content-Type": "application/json"], text: body)
        case .scripted(.failure(let error)):
            throw error
        case .unauthorized:
            return SegmentsHTTPResponse(status: 401)
        case .invalid:
            return Self.json(Self.error(code: nil, classification: "ValidationError", message: "not an audience query"), status: 400)
        case .known(let segments):
            return Self.json(Self.edges(query?.audiences ?? [], qualified: segments))
        case .unknown(.invalidIdentifier):
            return Self.json(Self.error(code: "INVALID_IDENTIFIER_EXCEPTION", classification: "DataFetchingException",
                                        message: "could not resolve _fs_user_id or _vuid"))
        case .unknown(.legacyInvalidIdentifier):
            return Self.json(Self.error(code: nil, classification: "InvalidIdentifierException",
                                        message: "could not resolve _fs_user_id or _vuid"))
        case .unknown(.nullCustomer):
            return Self.json(["data": ["customer": .null]])
        case .unknown(.notQualified):
            return Self.json(Self.edges(query?.audiences ?? [], qualified: []))
        }
    }

    // MARK: - Reading and writing GraphQL

    /// The identifier field, user id and audiences of the adapter's request, or `nil`.
    static func query(of request: SegmentsHTTPRequest) -> Query? {
        guard let body = request.body, case .object(let root)? = try? JSONDecoder().decode(JSONValue.self, from: body),
            case .string(let text)? = root["query"], case .object(let variables)? = root["variables"],
            case .string(let userId)? = variables["userId"], case .array(let list)? = variables["audiences"],
            let field = field(inQuery: text)
        else { return nil }
        let audiences = list.compactMap { value -> String? in
            if case .string(let name) = value { return name }
            return nil
        }
        guard audiences.count == list.count else { return nil }
        return Query(field: field, userId: userId, audiences: audiences, apiKey: request.headers["x-api-key"])
    }

    /// The name in `customer(<name>: $userId)`.
    private static func field(inQuery text: String) -> AudienceIdentifier.Field? {
        guard let open = text.range(of: "customer(") else { return nil }
        let rest = text[open.upperBound...]
        guard let colon = rest.firstIndex(of: ":") else { return nil }
        let name = rest[..<colon].trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? nil : AudienceIdentifier.Field(rawValue: name)
    }

    private static func edges(_ audiences: [String], qualified: Set<String>) -> JSONValue {
        let edges = audiences.map { name -> JSONValue in
            ["node": ["name": .string(name), "state": .string(qualified.contains(name) ? "qualified" : "not_qualified")]]
        }
        return ["data": ["customer": ["audiences": ["edges": .array(edges)]]]]
    }

    private static func error(code: String?, classification: String?, message: String) -> JSONValue {
        var extensions: [String: JSONValue] = [:]
        if let code { extensions["code"] = .string(code) }
        if let classification { extensions["classification"] = .string(classification) }
        return [
            "errors": [["message": .string(message), "extensions": .object(extensions)]],
            "data": ["customer": .null],
        ]
    }

    private static func json(_ value: JSONValue, status: Int = 200) -> SegmentsHTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return SegmentsHTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }
}

extension RecordingTransport {
    /// Answers every request to `path` (`/v3/graphql` by default) with `endpoint`.
    public func serveODP(_ endpoint: RecordingODPEndpoint, at path: String = RecordingODPEndpoint.path) {
        respond(to: path, with: endpoint.answer)
    }
}
