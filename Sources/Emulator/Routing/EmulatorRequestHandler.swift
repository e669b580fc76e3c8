import Foundation

/// Turns one parsed request into the emulator's answer, reading and updating the shared state.
///
/// Order of decisions: log the request → refuse a `Host` that is not loopback (403, against DNS
/// rebinding; a request without `Host` is served) → refuse a browser request from another origin
/// (403, ``EmulatorOriginCheck``) → route it (400/404/405) → play the next fault aimed at the
/// route (a `.status` or `.redirect` fault answers without processing; every other fault lets the request be
/// processed and garbles or delays only the answer, as a broken proxy would) → check authorization
/// (401) → validate the body (400) → record (507 when the byte budget is full, 413 when a customer's
/// properties would outgrow theirs; nothing is stored then) and answer.
struct EmulatorRequestHandler: Sendable {
    let state: EmulatorLocked<EmulatorState>
    var router = EmulatorRouter.standard

    func respond(to request: ParsedHTTPRequest, now: Date = Date()) -> EmulatorHTTPResponse {
        guard let target = EmulatorRequestTarget(request.target) else {
            return .error(400, "bad request target")
        }
        let routing = router.route(method: request.method, components: target.components, query: target.query)
        var route: EmulatorRoute?
        if case .matched(let match) = routing { route = match.route }
        let record = Self.record(request, target: target, route: route, now: now)

        return state.withLock { state in
            state.log(record)
            if let host = request.header("Host"), !EmulatorHostCheck.isLoopback(host) {
                return .error(403, "the Host header must name loopback (127.0.0.1, localhost or [::1])")
            }
            if let refusal = EmulatorOriginCheck.refusal(request.fields) {
                return .error(403, refusal)
            }
            switch routing {
            case .notFound:
                return .error(404, "no such endpoint")
            case .methodNotAllowed(let allowed):
                var response = EmulatorHTTPResponse.error(405, "method not allowed")
                response.headers.append(("Allow", allowed.joined(separator: ", ")))
                return response
            case .badRequest(let reason):
                return .error(400, reason)
            case .matched(let match):
                let fault = state.faults.take(for: match.route)
                if let fault, fault.answersWithoutProcessing {
                    return fault.apply(to: .error(500, "not processed"))
                }
                let normal = Self.answer(match, request: request, record: record, state: &state)
                return fault.map { $0.apply(to: normal) } ?? normal
            }
        }
    }

    // MARK: Endpoints

    private static func answer(_ match: EmulatorRouter.Match, request: ParsedHTTPRequest,
                               record: EmulatorRecordedRequest, state: inout EmulatorState) -> EmulatorHTTPResponse {
        if match.route == .graphql { return EmulatorGraphQL.answer(request, state: state) }
        // Every Engagement endpoint addresses a project or a stream.
        guard let integration = match.integration else { return .error(404, "no handler for route \(match.route)") }
        guard isAuthorized(request.header("Authorization"), for: integration, state: state) else {
            return .error(401, "unauthorized")
        }
        let now = record.receivedAt
        switch match.route {
        case .fetch:
            let cookie = match.cookie ?? ""
            let segments = state.segments(forCookie: cookie)
            let object = segments.mapValues { list in
                EmulatorJSON.array(list.map { segment in
                    var fields = segment.attributes.mapValues(EmulatorJSON.string)
                    fields["id"] = .string(segment.id)
                    fields["segmentation_id"] = .string(segment.segmentationId)
                    return .object(fields)
                })
            }
            return .json(200, object: object)
        case .link:
            guard let body = jsonObject(request.body),
                  let externalIds = stringMap(body["external_ids"]) else {
                return .error(400, "body must be {\"external_ids\": {name: value}}")
            }
            return answer(state.record(EmulatorLink(integration: integration, cookie: match.cookie ?? "",
                                                    externalIds: externalIds, receivedAt: now)))
        case .event, .customer:
            guard let body = jsonObject(request.body),
                  let customerIds = stringMap(body["customer_ids"]), !customerIds.isEmpty else {
                return .error(400, "body must carry \"customer_ids\": {name: value}")
            }
            var properties: [String: EmulatorJSON] = [:]
            switch body["properties"] {
            case nil, .null?: break
            case .object(let object)?: properties = object
            default: return .error(400, "\"properties\" must be an object")
            }
            var timestamp: Double?
            switch body["timestamp"] {
            case nil, .null?: break
            case .number(let value)?: timestamp = value
            default: return .error(400, "\"timestamp\" must be a number")
            }
            if match.route == .customer {
                return answer(state.record(EmulatorCustomerUpdate(
                    integration: integration, customerIds: customerIds, properties: properties, timestamp: timestamp,
                    receivedAt: now)))
            }
            guard case .string(let eventType)? = body["event_type"], !eventType.isEmpty else {
                return .error(400, "\"event_type\" must be a non-empty string")
            }
            return answer(state.record(EmulatorEvent(integration: integration, eventType: eventType,
                                                     customerIds: customerIds, properties: properties,
                                                     timestamp: timestamp, receivedAt: now)))
        default:
            return .error(404, "no handler for route \(match.route)")
        }
    }

    private static var success: EmulatorHTTPResponse { .json(200, object: ["success": true]) }

    /// 200 when the record was kept; 507 (Insufficient Storage: the emulator's store is full, try
    /// again after `reset()`) or 413 (this customer's properties would outgrow their bound) with a
    /// JSON error when it was refused and nothing changed.
    private static func answer(_ outcome: EmulatorState.StoreOutcome) -> EmulatorHTTPResponse {
        switch outcome {
        case .stored:
            return success
        case .storageFull:
            return .error(507, "the emulator's store is full (EmulatorLimits.maxStoredBytes); nothing was stored")
        case .customerPropertiesTooLarge:
            return .error(413, "the customer's properties would exceed EmulatorLimits.maxCustomerPropertyBytes; "
                          + "nothing was stored")
        }
    }

    /// Project mode: the exact configured value. Stream mode: `Bearer <token>` with a known token.
    private static func isAuthorized(_ header: String?, for integration: EmulatorIntegration,
                                     state: EmulatorState) -> Bool {
        switch integration {
        case .project:
            guard let required = state.projectAuthorization else { return true }
            return header == required
        case .stream:
            guard let tokens = state.streamBearerTokens else { return true }
            guard let header, header.hasPrefix("Bearer ") else { return false }
            return tokens.contains(String(header.dropFirst("Bearer ".count)))
        }
    }

    private static func jsonObject(_ body: [UInt8]) -> [String: EmulatorJSON]? {
        guard let value = try? EmulatorJSON(jsonData: Data(body)), case .object(let object) = value else { return nil }
        return object
    }

    private static func stringMap(_ value: EmulatorJSON?) -> [String: String]? {
        guard case .object(let object)? = value else { return nil }
        var map: [String: String] = [:]
        for (key, value) in object {
            guard case .string(let string) = value else { return nil }
            map[key] = string
        }
        return map
    }

    private static func record(_ request: ParsedHTTPRequest, target: EmulatorRequestTarget, route: EmulatorRoute?,
                               now: Date) -> EmulatorRecordedRequest {
        var headers: [String: String] = [:]
        for field in request.fields {
            let name = field.name.lowercased()
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        return EmulatorRecordedRequest(
            method: request.method, path: target.path, pathComponents: target.components, rawQuery: target.rawQuery,
            query: target.query, headers: headers, body: Data(request.body), receivedAt: now, route: route
        )
    }
}
