//! The connection: one JSON-RPC peer (the editor), its requests read here and answered, each
//! long one (`session/new`, `session/load`, `session/prompt`) on a task of its own so that
//! `session/cancel` and the answers to our own requests (approvals, files) keep flowing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, AvailableCommandsUpdate,
    CancelNotification, ClientCapabilities, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, UntypedMessage};
use serde::Serialize;
use serde_json::Value;
use toolhost_core::conversation::Message;

use crate::auth::MissingKey;
use crate::launch::AcpLaunch;
use crate::modes::{mode_state, parse_mode};
use crate::prompt::message_content;
use crate::replay::replay;
use crate::requests::{internal, parse, unknown_session};
use crate::session::{AcpSession, SessionRequest};

/// Serves one editor over `transport` until it closes the connection; then ends every
/// session (sub-agents, hooks, MCP servers).
pub async fn serve(
    launch: AcpLaunch,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    let state = Arc::new(State {
        launch,
        client: Mutex::new(ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let requests = Arc::clone(&state);
    let cancels = Arc::clone(&state);
    let served = Agent
        .v1()
        .name("toolhost")
        .on_receive_request(
            async move |request: UntypedMessage,
                        responder: Responder<Value>,
                        connection: ConnectionTo<Client>| {
                Arc::clone(&requests).dispatch(request, responder, connection)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _connection: ConnectionTo<Client>| {
                if let Some(session) = cancels.session(&notification.session_id.0) {
                    session.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    let sessions: Vec<Arc<AcpSession>> = state
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain()
        .map(|(_, session)| session)
        .collect();
    for session in sessions {
        session.close().await;
    }
    served
}

/// [`serve`] on this process's stdin and stdout.
pub async fn serve_stdio(launch: AcpLaunch) -> Result<(), Error> {
    serve(launch, agent_client_protocol::Stdio::new()).await
}

/// What the connection knows.
struct State {
    launch: AcpLaunch,
    /// What the editor offers (`initialize`).
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

impl State {
    fn session(&self, id: &str) -> Option<Arc<AcpSession>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    fn known_session(&self, id: &str) -> Result<Arc<AcpSession>, Error> {
        self.session(id).ok_or_else(|| unknown_session(id))
    }

    /// Answers `request`: at once for the quick methods, from a task for the others. The
    /// error of a request that cannot be answered goes back as its response.
    fn dispatch(
        self: Arc<Self>,
        request: UntypedMessage,
        responder: Responder<Value>,
        connection: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let UntypedMessage { method, params } = request;
        match method.as_str() {
            "initialize" => answer(responder, self.initialize(&parse(&method, &params)?)),
            "authenticate" => answer(responder, self.authenticate(&parse(&method, &params)?)),
            "session/new" => {
                let request: NewSessionRequest = parse(&method, &params)?;
                spawn(responder, async move {
                    self.new_session(request, connection).await
                });
                Ok(())
            }
            "session/load" => {
                let request: LoadSessionRequest = parse(&method, &params)?;
                spawn(responder, async move {
                    self.load_session(request, connection).await
                });
                Ok(())
            }
            "session/prompt" => {
                let request: PromptRequest = parse(&method, &params)?;
                let session = self.known_session(&request.session_id.0)?;
                let content = message_content(&request.prompt)?;
                spawn(responder, async move {
                    let stop = session.prompt(content).await?;
                    Ok(Answered::alone(PromptResponse::new(stop)))
                });
                Ok(())
            }
            "session/set_config_option" => {
                let request: SetSessionConfigOptionRequest = parse(&method, &params)?;
                let session = self.known_session(&request.session_id.0)?;
                let options = session.set_config_option(&request.config_id.0, &request.value)?;
                answer(responder, Ok(SetSessionConfigOptionResponse::new(options)))
            }
            "session/set_mode" => {
                let request: SetSessionModeRequest = parse(&method, &params)?;
                let session = self.known_session(&request.session_id.0)?;
                session.set_mode(parse_mode(&request.mode_id)?)?;
                answer(responder, Ok(SetSessionModeResponse::new()))
            }
            _ => Err(Error::method_not_found().data(format!(
                "toolhost acp has no method '{method}'; it answers initialize, authenticate, \
                 session/new, session/load, session/prompt, session/set_mode, \
                 session/set_config_option and the session/cancel notification"
            ))),
        }
    }

    fn initialize(&self, request: &InitializeRequest) -> Result<InitializeResponse, Error> {
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) =
            request.client_capabilities.clone();
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true).sse(true));
        let mut response = InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .agent_info(
                Implementation::new("toolhost", env!("CARGO_PKG_VERSION"))
                    .title("toolhost".to_owned()),
            );
        if let Some(missing) = self.missing_key() {
            response = response.auth_methods(vec![missing.method()]);
        }
        Ok(response)
    }

    /// The provider's key that is not set, judged on the configuration of the folder
    /// `toolhost acp` started in (a session's workspace may choose another provider; its
    /// `session/new` says so).
    fn missing_key(&self) -> Option<MissingKey> {
        let config = self.launch.config_for(self.launch.workspace.clone()).ok()?;
        MissingKey::of(&config, &self.launch.model)
    }

    /// The key cannot be given over ACP: this checks whether it is set now.
    fn authenticate(&self, request: &AuthenticateRequest) -> Result<AuthenticateResponse, Error> {
        match self.missing_key() {
            Some(missing) if missing.method_id() == *request.method_id.0 => Err(missing.error()),
            Some(missing) => Err(crate::requests::invalid_params(
                format!(
                    "authenticate: methodId: unknown method '{}'; initialize offered '{}'",
                    request.method_id.0,
                    missing.method_id()
                ),
                "methodId",
            )),
            None => Ok(AuthenticateResponse::new()),
        }
    }

    async fn open(
        &self,
        method: &str,
        cwd: PathBuf,
        mcp_servers: &[agent_client_protocol::v1::schema::McpServer],
        resume: Option<String>,
        connection: ConnectionTo<Client>,
    ) -> Result<(Arc<AcpSession>, Vec<Message>), Error> {
        if let Some(id) = &resume
            && self.session(id).is_some()
        {
            return Err(Error::invalid_request()
                .data(format!("session {id} is open in this toolhost acp already")));
        }
        let client = self
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (session, messages) = AcpSession::open(SessionRequest {
            launch: &self.launch,
            connection,
            client: &client,
            method,
            cwd,
            mcp_servers,
            resume,
        })
        .await?;
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.id.clone(), Arc::clone(&session));
        Ok((session, messages))
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
        connection: ConnectionTo<Client>,
    ) -> Result<Answered<NewSessionResponse>, Error> {
        let (session, _) = self
            .open(
                "session/new",
                request.cwd,
                &request.mcp_servers,
                None,
                connection,
            )
            .await?;
        let response = NewSessionResponse::new(session.id.clone())
            .modes(mode_state(session.mode()))
            .config_options(session.config_options());
        Ok(Answered::then_commands(response, session))
    }

    /// The stored conversation is told again before the answer, as ACP asks.
    async fn load_session(
        &self,
        request: LoadSessionRequest,
        connection: ConnectionTo<Client>,
    ) -> Result<Answered<LoadSessionResponse>, Error> {
        let (session, messages) = self
            .open(
                "session/load",
                request.cwd,
                &request.mcp_servers,
                Some(request.session_id.0.to_string()),
                connection,
            )
            .await?;
        let registry = session.registry().await;
        for update in replay(&messages, &registry) {
            session.notify(update);
        }
        let response = LoadSessionResponse::new()
            .modes(mode_state(session.mode()))
            .config_options(session.config_options());
        Ok(Answered::then_commands(response, session))
    }
}

/// A response, and the session whose commands the editor is told of once it has it.
struct Answered<T> {
    response: T,
    then: Option<Arc<AcpSession>>,
}

impl<T> Answered<T> {
    fn then_commands(response: T, session: Arc<AcpSession>) -> Self {
        Self {
            response,
            then: Some(session),
        }
    }
}

impl<T> Answered<T> {
    fn alone(response: T) -> Self {
        Self {
            response,
            then: None,
        }
    }
}

/// Answers `responder` with `response` (or its error).
fn answer<T: Serialize>(
    responder: Responder<Value>,
    response: Result<T, Error>,
) -> Result<(), Error> {
    match response.and_then(|response| serde_json::to_value(response).map_err(internal)) {
        Ok(value) => responder.respond(value),
        Err(error) => responder.respond_with_error(error),
    }
}

/// Answers `responder` from a task of its own; after the answer, a new or loaded session's
/// commands.
fn spawn<T: Serialize + Send + 'static>(
    responder: Responder<Value>,
    work: impl Future<Output = Result<Answered<T>, Error>> + Send + 'static,
) {
    tokio::spawn(async move {
        match work.await {
            Ok(Answered { response, then }) => {
                if let Err(error) = answer(responder, Ok(response)) {
                    tracing::debug!("the editor is gone: {error}");
                }
                if let Some(session) = then {
                    let commands = session.available_commands().await;
                    session.notify(SessionUpdate::AvailableCommandsUpdate(
                        AvailableCommandsUpdate::new(commands),
                    ));
                }
            }
            Err(error) => {
                if let Err(error) = responder.respond_with_error(error) {
                    tracing::debug!("the editor is gone: {error}");
                }
            }
        }
    });
}
