//! The Landlock sandbox against real writes and real connections. This kernel supports
//! Landlock (ABI 7), so the sandbox must be enforced here.

use std::net::TcpListener;

use pretty_assertions::assert_eq;
use toolhost_exec::{
    NetworkAccess, ProcessError, ProcessSpec, SandboxError, SandboxPolicy, SandboxStatus,
    sandbox_support,
};

#[test]
fn this_machine_enforces_the_sandbox() {
    assert_eq!(sandbox_support(), SandboxStatus::Enforced);
}

#[tokio::test]
async fn writes_succeed_inside_the_workspace_and_fail_outside() -> anyhow::Result<()> {
    let workspace = tempfile::tempdir()?;
    let outside = tempfile::tempdir()?;
    let policy = SandboxPolicy::WorkspaceWrite {
        writable_roots: vec![workspace.path().to_path_buf()],
        network: NetworkAccess::Allowed,
    };
    let inside_file = workspace.path().join("inside.txt");
    let outside_file = outside.path().join("outside.txt");

    let inside = ProcessSpec::bash(format!("echo kept > '{}'", inside_file.display()))
        .sandbox(policy.clone())
        .run()
        .await?;
    assert_eq!(inside.sandbox, SandboxStatus::Enforced);
    assert!(inside.success(), "{}", inside.combined.text);
    assert_eq!(std::fs::read_to_string(&inside_file)?, "kept\n");

    let escaped = ProcessSpec::bash(format!(
        "echo lost > '{}'; mkdir '{}/dir'; echo read: $(cat '{}')",
        outside_file.display(),
        outside.path().display(),
        inside_file.display()
    ))
    .sandbox(policy)
    .run()
    .await?;
    assert!(
        escaped.stderr.text.contains("Permission denied"),
        "{}",
        escaped.stderr.text
    );
    assert_eq!(escaped.stdout.text, "read: kept\n", "reading stays allowed");
    assert!(!outside_file.exists());
    assert!(!outside.path().join("dir").exists());

    // The same command without the sandbox does write outside.
    let unsandboxed = ProcessSpec::bash(format!("echo written > '{}'", outside_file.display()))
        .run()
        .await?;
    assert_eq!(unsandboxed.sandbox, SandboxStatus::Off);
    assert!(outside_file.exists());
    Ok(())
}

#[tokio::test]
async fn read_only_allows_dev_null_but_no_file_writes() -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let outcome = ProcessSpec::bash("echo quiet > /dev/null && echo ok; touch blocked")
        .working_dir(folder.path())
        .sandbox(SandboxPolicy::ReadOnly {
            network: NetworkAccess::Allowed,
        })
        .run()
        .await?;
    assert_eq!(outcome.stdout.text, "ok\n");
    assert!(!outcome.success());
    assert!(!folder.path().join("blocked").exists());
    Ok(())
}

#[tokio::test]
async fn network_denial_blocks_tcp_connections() -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let sandboxed =
        |network| ProcessSpec::bash(connect.clone()).sandbox(SandboxPolicy::ReadOnly { network });

    let allowed = sandboxed(NetworkAccess::Allowed).run().await?;
    assert_eq!(allowed.stdout.text, "connected\n");
    let denied = sandboxed(NetworkAccess::Denied).run().await?;
    assert_eq!(denied.stdout.text, "");
    assert!(!denied.success());
    Ok(())
}

#[tokio::test]
async fn network_denial_blocks_udp_too_but_not_local_sockets() -> anyhow::Result<()> {
    let receiver = std::net::UdpSocket::bind("127.0.0.1:0")?;
    receiver.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
    let port = receiver.local_addr()?.port();
    let send = format!("echo ping > /dev/udp/127.0.0.1/{port} && echo sent");
    let sandboxed =
        |network| ProcessSpec::bash(send.clone()).sandbox(SandboxPolicy::ReadOnly { network });

    let allowed = sandboxed(NetworkAccess::Allowed).run().await?;
    assert_eq!(allowed.stdout.text, "sent\n");
    let mut buffer = [0u8; 16];
    let (received, _) = receiver.recv_from(&mut buffer)?;
    assert_eq!(&buffer[..received], b"ping\n");

    let denied = sandboxed(NetworkAccess::Denied).run().await?;
    assert_eq!(denied.stdout.text, "");
    assert!(!denied.success());
    assert!(
        receiver.recv_from(&mut buffer).is_err(),
        "a datagram got through"
    );

    // Local (Unix) sockets are not the network: they keep working.
    let local = ProcessSpec::new("python3")
        .args([
            "-c",
            "import socket; a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1))",
        ])
        .sandbox(SandboxPolicy::ReadOnly {
            network: NetworkAccess::Denied,
        })
        .run()
        .await?;
    assert_eq!(local.stdout.text, "b'x'\n", "{}", local.stderr.text);
    Ok(())
}

#[tokio::test]
async fn a_missing_writable_root_is_an_error_that_names_it() {
    let result = ProcessSpec::bash("true")
        .sandbox(SandboxPolicy::WorkspaceWrite {
            writable_roots: vec!["/definitely/not/here".into()],
            network: NetworkAccess::Allowed,
        })
        .run()
        .await;
    let Err(ProcessError::Sandbox(error @ SandboxError::MissingWritableRoot { .. })) = result
    else {
        panic!("expected a missing-root error, got {result:?}");
    };
    assert!(error.to_string().contains("/definitely/not/here"));
}

#[tokio::test]
async fn the_default_workspace_policy_allows_the_temp_folder() -> anyhow::Result<()> {
    let workspace = tempfile::tempdir()?;
    let temp_file = std::env::temp_dir().join(format!("toolhost-exec-{}", std::process::id()));
    let outcome = ProcessSpec::bash(format!("echo t > '{}'", temp_file.display()))
        .sandbox(SandboxPolicy::workspace_write(workspace.path()))
        .run()
        .await?;
    assert!(outcome.success(), "{}", outcome.combined.text);
    std::fs::remove_file(&temp_file)?;
    Ok(())
}

/// The sandbox is applied to a short-lived thread that spawns the child, never to the caller:
/// after sandboxed runs the calling thread (the only one of a current-thread runtime) still
/// writes anywhere and opens internet sockets, and the next unsandboxed run is unrestricted.
#[tokio::test(flavor = "current_thread")]
async fn a_sandboxed_run_leaves_the_caller_unrestricted() -> anyhow::Result<()> {
    let outside = tempfile::tempdir()?;
    for network in [NetworkAccess::Denied, NetworkAccess::Allowed] {
        let run = ProcessSpec::bash(format!("echo no > '{}/child'", outside.path().display()))
            .sandbox(SandboxPolicy::ReadOnly { network })
            .run()
            .await?;
        assert_eq!(run.sandbox, SandboxStatus::Enforced);
        assert!(!run.success());
    }
    assert!(!outside.path().join("child").exists());
    std::fs::write(outside.path().join("caller"), "yes")?;
    std::net::UdpSocket::bind("127.0.0.1:0")?;
    let after = ProcessSpec::bash(format!("echo yes > '{}/child'", outside.path().display()))
        .run()
        .await?;
    assert!(after.success(), "{}", after.combined.text);
    assert!(outside.path().join("child").exists());
    Ok(())
}

/// A program named without a folder is looked up on the child's PATH, as before.
#[tokio::test]
async fn programs_are_found_on_the_child_path_inside_the_sandbox() -> anyhow::Result<()> {
    let run = ProcessSpec::new("sh")
        .args(["-c", "echo $0"])
        .sandbox(SandboxPolicy::ReadOnly {
            network: NetworkAccess::Allowed,
        })
        .run()
        .await?;
    assert_eq!(run.stdout.text, "sh\n", "argv[0] stays the name given");
    let missing = ProcessSpec::new("no-such-program-here")
        .sandbox(SandboxPolicy::ReadOnly {
            network: NetworkAccess::Allowed,
        })
        .run()
        .await;
    assert!(
        matches!(missing, Err(ProcessError::Spawn { .. })),
        "{missing:?}"
    );
    Ok(())
}
