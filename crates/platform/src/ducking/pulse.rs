//! Just enough of PulseAudio's native protocol for ducking: list the
//! playback streams with their volumes and owners, set a stream's volume.
//! The `pulseaudio` crate (pure Rust; cpal's PulseAudio host already uses
//! it) writes and reads the messages; every read and write is bounded.

use std::ffi::CString;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use pulseaudio::protocol::{self, ChannelVolume, Command, Prop, Volume};

use super::DuckError;

/// A sound server that does not answer within this is taken as gone.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// A playback stream as ducking needs it.
#[derive(Debug, Clone)]
pub struct Playback {
    pub index: u32,
    pub name: String,
    pub volumes: Vec<u32>,
    pub volume_writable: bool,
    /// The playing process, as the stream's client says.
    pub pid: Option<u32>,
}

pub struct Server {
    socket: BufReader<UnixStream>,
    version: u16,
    seq: u32,
}

fn server_error(e: impl std::fmt::Display) -> DuckError {
    DuckError::Server(e.to_string())
}

impl Server {
    pub fn connect() -> Result<Self, DuckError> {
        let path = pulseaudio::socket_path_from_env()
            .ok_or_else(|| DuckError::NoServer("no pulse socket in XDG_RUNTIME_DIR".into()))?;
        let stream = UnixStream::connect(&path)
            .map_err(|e| DuckError::NoServer(format!("{}: {e}", path.display())))?;
        stream
            .set_read_timeout(Some(ANSWER_WITHIN))
            .and_then(|()| stream.set_write_timeout(Some(ANSWER_WITHIN)))
            .map_err(server_error)?;
        let mut server = Self {
            socket: BufReader::new(stream),
            version: protocol::MAX_VERSION,
            seq: 0,
        };
        let cookie = pulseaudio::cookie_path_from_env()
            .and_then(|path| std::fs::read(path).ok())
            .unwrap_or_default();
        server.send(&Command::Auth(protocol::AuthParams {
            version: protocol::MAX_VERSION,
            supports_shm: false,
            supports_memfd: false,
            cookie,
        }))?;
        let (_, auth) =
            protocol::read_reply_message::<protocol::AuthReply>(&mut server.socket, server.version)
                .map_err(server_error)?;
        server.version = server.version.min(auth.version);
        let mut props = protocol::Props::new();
        props.set(
            Prop::ApplicationName,
            CString::new("Utter (ducking)").expect("no NUL"),
        );
        server.send(&Command::SetClientName(props))?;
        protocol::read_reply_message::<protocol::SetClientNameReply>(
            &mut server.socket,
            server.version,
        )
        .map_err(server_error)?;
        Ok(server)
    }

    fn send(&mut self, command: &Command) -> Result<(), DuckError> {
        let seq = self.seq;
        self.seq += 1;
        protocol::write_command_message(self.socket.get_mut(), seq, command, self.version)
            .map_err(server_error)
    }

    /// Every playback stream now.
    pub fn playback_streams(&mut self) -> Result<Vec<Playback>, DuckError> {
        self.send(&Command::GetSinkInputInfoList)?;
        let (_, list) = protocol::read_reply_message::<protocol::SinkInputInfoList>(
            &mut self.socket,
            self.version,
        )
        .map_err(server_error)?;
        Ok(list
            .into_iter()
            .map(|s| Playback {
                index: s.index,
                name: s.name.to_string_lossy().into_owned(),
                volumes: s.cvolume.channels().iter().map(Volume::as_u32).collect(),
                volume_writable: s.has_volume && s.volume_writable,
                pid: s
                    .props
                    .get(Prop::ApplicationProcessId)
                    .and_then(|bytes| std::str::from_utf8(bytes).ok())
                    .and_then(|text| text.trim_end_matches('\0').parse().ok()),
            })
            .collect())
    }

    /// Sets stream `index`'s volume, one value per channel.
    pub fn set_volume(&mut self, index: u32, volumes: &[u32]) -> Result<(), DuckError> {
        let mut volume = ChannelVolume::empty();
        for v in volumes {
            volume.push(Volume::from_u32_clamped(*v));
        }
        self.send(&Command::SetSinkInputVolume(
            protocol::SetStreamVolumeParams { index, volume },
        ))?;
        protocol::read_ack_message(&mut self.socket).map_err(server_error)?;
        Ok(())
    }
}
