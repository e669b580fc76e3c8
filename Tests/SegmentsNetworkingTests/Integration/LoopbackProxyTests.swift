import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Behaviour P3 over real loopback HTTP: with `http_proxy` pointing at a listener on 127.0.0.1, a
/// request to a loopback base URL never reaches that "proxy" (which would read the key in clear
/// text). Environment variables are process-wide and the tests run in parallel, so each case runs
/// in its own process (an exit test) and sets the variables only there.
@Suite(Hang.timeLimit(minutes: 2)) struct LoopbackProxyTests {
    #if compiler(>=6.2) && (os(macOS) || os(Linux))
        @Test func p3_aLoopbackRequestNeverReachesTheProxyInHTTPProxy() async {
            await #expect(processExitsWith: .success) {
                let proxy = try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: Data("{}".utf8))) }
                let server = try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: Data("{}".utf8))) }
                setenv("http_proxy", "http://127.0.0.1:\(proxy.port)", 1)
                unsetenv("no_proxy")
                unsetenv("NO_PROXY")
                let request = SegmentsHTTPRequest(
                    method: .post, url: server.url("/track"), headers: ["Authorization": "Token SECRET"], body: Data("{}".utf8))
                let outcome = await Result { try await URLSessionSegmentsTransport(timeout: 5).send(request) }
                if !proxy.received.isEmpty { exit(2) }  // the proxy read `Authorization: Token SECRET`
                #if canImport(FoundationNetworking)
                    // libcurl reads the variable itself: the request is refused before anything is sent.
                    guard case .failure(let error as SegmentsError) = outcome, error.code == .invalidConfiguration,
                        error.message.contains("http_proxy"), !error.message.contains("\(proxy.port)")
                    else { exit(3) }
                    exit(server.received.isEmpty ? 0 : 4)
                #else
                    // Apple platforms: the loopback session has no proxy, so the request goes direct.
                    guard case .success(let response) = outcome, response.status == 200 else { exit(5) }
                    exit(server.received.count == 1 ? 0 : 4)
                #endif
            }
        }

        @Test func p3_aLoopbackHostInNoProxyIsSentDirectly() async {
            await #expect(processExitsWith: .success) {
                let proxy = try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: Data("{}".utf8))) }
                let server = try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: Data("{}".utf8))) }
                setenv("http_proxy", "http://127.0.0.1:\(proxy.port)", 1)
                setenv("no_proxy", "127.0.0.1", 1)
                let request = SegmentsHTTPRequest(method: .get, url: server.url("/segments"))
                let response = try await URLSessionSegmentsTransport(timeout: 5).send(request)
                exit(response.status == 200 && proxy.received.isEmpty && server.received.count == 1 ? 0 : 2)
            }
        }
    #endif
}

extension Result where Failure == any Error {
    fileprivate init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
