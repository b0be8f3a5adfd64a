//! How the web view draws on this machine.
//!
//! WebKitGTK composites the page's layers through OpenGL. With no GPU to render on (no DRM
//! render node: a virtual machine, a remote or virtual display) that OpenGL is Mesa's software
//! rasteriser, and compositing through it costs more than it saves. Measured under Xvfb
//! (release app, `make bench-ui`), with WebKit's default:
//! - a session opened within a second of start waited 0.5–0.9 s for its first frame while
//!   the compositor's shaders ran on the CPU, though its rows were in the DOM after 0.1 s;
//! - a streamed reply dropped three frames in four (767 gaps over 33 ms in 1,325 frames).
//!
//! Without compositing: 70–77 ms and 2 gaps in 3,078 frames. So there the web view paints
//! directly, unless the operator set WebKit's own variable either way.

use std::ffi::OsStr;
use std::path::Path;

/// Whether the web view should paint without compositing: OpenGL here is software, and the
/// operator left WebKit's choice alone.
pub fn paint_directly(env: impl Fn(&str) -> Option<std::ffi::OsString>, dri: &Path) -> bool {
    if env("WEBKIT_DISABLE_COMPOSITING_MODE").is_some()
        || env("WEBKIT_FORCE_COMPOSITING_MODE").is_some()
    {
        return false;
    }
    let forced_software =
        env("LIBGL_ALWAYS_SOFTWARE").is_some_and(|v| !v.is_empty() && v != OsStr::new("0"));
    forced_software || !has_render_node(dri)
}

/// A DRM render node (`/dev/dri/renderD*`): a GPU Mesa can render on.
fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Applies the choice to the main window's web view (WebKitGTK: Linux only).
#[cfg(target_os = "linux")]
pub fn apply<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    use tauri::Manager as _;
    if !paint_directly(|k| std::env::var_os(k), Path::new("/dev/dri")) {
        return;
    }
    let Some(window) = app.get_webview_window("main") else {
        return;
    };
    tracing::info!("no GPU render node: the web view paints without compositing");
    let result = window.with_webview(|webview| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt as _, WebViewExt as _};
        if let Some(settings) = webview.inner().settings() {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    });
    if let Err(e) = result {
        tracing::warn!("could not change how the web view paints: {e}");
    }
}

/// Other platforms' web views choose for themselves.
#[cfg(not(target_os = "linux"))]
pub fn apply<R: tauri::Runtime>(_app: &tauri::AppHandle<R>) {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn dri(nodes: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for n in nodes {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        dir
    }

    #[test]
    fn paints_directly_only_without_a_render_node() {
        let gpu = dri(&["card0", "renderD128"]);
        let display_only = dri(&["card0"]);
        assert!(!paint_directly(env(&[]), gpu.path()));
        assert!(paint_directly(env(&[]), display_only.path()));
        assert!(paint_directly(env(&[]), Path::new("/nonexistent/dri")));
    }

    #[test]
    fn software_opengl_forced_by_the_operator_counts_as_no_gpu() {
        let gpu = dri(&["renderD128"]);
        assert!(paint_directly(
            env(&[("LIBGL_ALWAYS_SOFTWARE", "1")]),
            gpu.path()
        ));
        assert!(!paint_directly(
            env(&[("LIBGL_ALWAYS_SOFTWARE", "0")]),
            gpu.path()
        ));
        assert!(!paint_directly(
            env(&[("LIBGL_ALWAYS_SOFTWARE", "")]),
            gpu.path()
        ));
    }

    #[test]
    fn webkits_own_variables_win() {
        let none = dri(&[]);
        for var in [
            "WEBKIT_DISABLE_COMPOSITING_MODE",
            "WEBKIT_FORCE_COMPOSITING_MODE",
        ] {
            assert!(!paint_directly(env(&[(var, "1")]), none.path()), "{var}");
            assert!(!paint_directly(env(&[(var, "0")]), none.path()), "{var}");
        }
    }
}
