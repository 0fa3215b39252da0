// Recording overlay entry: a tiny always-on-top window with no controls.
import { mount } from 'svelte';
import Overlay from './Overlay.svelte';
import './overlay.css';

mount(Overlay, { target: document.getElementById('overlay')! });
