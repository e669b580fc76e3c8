/// Which integration a request addressed: a project (by token) or a Data Hub stream (by id).
public enum EmulatorIntegration: Hashable, Sendable {
    /// `/webxp/projects/{token}/…` and `/track/v2/projects/{token}/…`.
    case project(token: String)
    /// `/webxp/streams/{id}/…` and `/track/u/v1/…?stream_id={id}`.
    case stream(id: String)
}
