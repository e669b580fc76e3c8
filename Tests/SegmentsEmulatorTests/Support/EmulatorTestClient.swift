import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SegmentsEmulator

/// A response as URLSession delivered it.
struct ClientResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    var json: EmulatorJSON? { try? EmulatorJSON(jsonData: body) }
}

/// Well-formed requests through URLSession (one ephemeral session per client).
final class EmulatorTestClient: Sendable {
    let baseURL: URL
    private let session: URLSession

    init(baseURL: URL, timeout: TimeInterval = 5) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `method pathAndQuery` (already percent-encoded) with an optional JSON body.
    func send(_ method: String, _ pathAndQuery: String, json: String? = nil,
              headers: [String: String] = [:]) async throws -> ClientResponse {
        guard let url = URL(string: baseURL.absoluteString + pathAndQuery) else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let session = self.session
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let http = response as? HTTPURLResponse {
                    var headers: [String: String] = [:]
                    for (key, value) in http.allHeaderFields {
                        headers["\(key)"] = "\(value)"
                    }
                    continuation.resume(returning: ClientResponse(status: http.statusCode, headers: headers,
                                                                  body: data ?? Data()))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }.resume()
        }
    }

    func get(_ pathAndQuery: String, headers: [String: String] = [:]) async throws -> ClientResponse {
        try await send("GET", pathAndQuery, headers: headers)
    }

    func post(_ pathAndQuery: String, _ json: String, headers: [String: String] = [:]) async throws -> ClientResponse {
        try await send("POST", pathAndQuery, json: json, headers: headers)
    }
}

/// Starts an emulator on an ephemeral port, runs `body`, and always stops it.
func withEmulator<Result>(limits: EmulatorLimits = EmulatorLimits(),
                          _ body: (SegmentsEmulator, EmulatorTestClient) async throws -> Result) async throws -> Result {
    let emulator = SegmentsEmulator(limits: limits)
    let baseURL = try emulator.start()
    defer { emulator.stop() }
    let client = EmulatorTestClient(baseURL: baseURL)
    return try await body(emulator, client)
}

/// Wire JSON builders for the tracking endpoints.
enum Body {
    static func event(_ type: String, ids: [String: String], properties: String = "{}",
                      timestamp: Double = 1_732_249_200.5) -> String {
        #"{"customer_ids": \#(object(ids)), "properties": \#(properties), "timestamp": \#(timestamp), "event_type": "\#(type)"}"#
    }

    static func customer(ids: [String: String], properties: String = "{}") -> String {
        #"{"customer_ids": \#(object(ids)), "properties": \#(properties), "timestamp": 1732249200}"#
    }

    static func link(_ ids: [String: String]) -> String {
        #"{"external_ids": \#(object(ids))}"#
    }

    static func object(_ map: [String: String]) -> String {
        let pairs = map.sorted { $0.key < $1.key }.map { #""\#($0.key)": "\#($0.value)""# }
        return "{" + pairs.joined(separator: ", ") + "}"
    }
}
