//! A bare Tauri v2 window with one static page and no commands or plugins: what any Tauri
//! app costs before its own code, measured next to Nomos in the same run.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    if let Err(err) = tauri::Builder::default().run(tauri::generate_context!()) {
        eprintln!("bare-tauri: {err}");
        std::process::exit(1);
    }
}
